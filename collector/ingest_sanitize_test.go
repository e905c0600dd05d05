package collector_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

func dkv(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

const sanitiseTrace = "0af7651916cd43dd8448eb211c80319c"

// chatSpan is a finished chat span of thread th-bad on a model without a
// price, so that a cost left unknown is not priced; extra adds usage.
func chatSpan(spanID string, start time.Time, answer string, extra ...*commonpb.KeyValue) *tracepb.Span {
	attrs := append([]*commonpb.KeyValue{
		kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "local"),
		kv("gen_ai.request.model", "house-model"), kv("gen_ai.conversation.id", "th-bad"),
		kv("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`),
		kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+answer+`"}]}]`),
	}, extra...)
	ns := uint64(start.UnixNano())
	return &tracepb.Span{
		TraceId: mustHex(sanitiseTrace), SpanId: mustHex(spanID), Name: "chat house-model", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: ns, EndTimeUnixNano: ns + uint64(time.Second), Attributes: attrs,
	}
}

func traceRequest(spans ...*tracepb.Span) []*tracepb.ResourceSpans {
	return []*tracepb.ResourceSpans{{Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}
}

func newTestIngester(t *testing.T) (*collector.Ingester, *topology.Conn) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Shutdown(context.Background()) })
	return in, conn
}

// usage renders a row's tokens in and out and cost as "in/out/cost", NULL
// as "-".
const usage = "concat(ifNull(toString(tokens_in), '-'), '/', ifNull(toString(tokens_out), '-'), '/', ifNull(toString(cost_usd), '-'))"

// TestIngesterSanitisesUsage sends NaN, infinite and negative costs and
// negative and overflowing token counts, in several conventions, through
// the ingester: they are stored as unknown and counted, and the viewer's
// JSON API still answers.
func TestIngesterSanitisesUsage(t *testing.T) {
	in, conn := newTestIngester(t)
	ctx := context.Background()
	now := time.Now().Add(-time.Hour)
	res, err := in.Traces(ctx, traceRequest(
		chatSpan("a000000000000001", now, "nan", ikv("gen_ai.usage.input_tokens", 10), ikv("gen_ai.usage.output_tokens", 5), dkv("convtrace.cost_usd", math.NaN())),
		chatSpan("a000000000000002", now.Add(time.Second), "inf", dkv("llm.cost.total", math.Inf(1))),
		chatSpan("a000000000000003", now.Add(2*time.Second), "negative", dkv("convtrace.cost_usd", -0.5), dkv("llm.cost.total", 0.5)),
		chatSpan("a000000000000004", now.Add(3*time.Second), "tokens", ikv("gen_ai.usage.input_tokens", -5), ikv("gen_ai.usage.completion_tokens", 5_000_000_000), dkv("convtrace.cost_usd", math.Inf(-1))),
		chatSpan("a000000000000005", now.Add(4*time.Second), "valid", ikv("gen_ai.usage.prompt_tokens", 3), ikv("gen_ai.usage.completion_tokens", 4), dkv("convtrace.cost_usd", 0.25)),
	))
	if err != nil || res.Rejected != 0 {
		t.Fatalf("Traces = %+v, %v", res, err)
	}
	want := []string{"a000000000000001 10/5/-", "a000000000000002 -/-/-", "a000000000000003 -/-/-", "a000000000000004 -/-/-", "a000000000000005 3/4/0.25"}
	for _, q := range []string{
		"SELECT concat(span_id, ' ', " + usage + ") FROM conversations FINAL WHERE role = 'response' ORDER BY span_id",
		"SELECT concat(span_id, ' ', " + usage + ") FROM spans FINAL ORDER BY span_id",
	} {
		if got := testkit.Strings(t, conn, q); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
	if got := in.Stats().ValuesSanitised; got != 6 {
		t.Errorf("ValuesSanitised = %d, want 6 (NaN, +Inf, negative and -Inf costs, negative and overflowing tokens)", got)
	}

	h := viewer.New(conn, viewer.WithLogger(discard())).Handler()
	for _, path := range []string{"/api/threads", "/api/cost", "/api/threads/th-bad/turns", "/api/threads/th-bad/cost"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("GET %s = %d %.200q, want 200 with valid JSON", path, rec.Code, rec.Body.String())
		}
	}
}

// TestExporterSanitisesUsage is the in-process path: instrument writes a
// NaN cost and a negative token count as they are given.
func TestExporterSanitisesUsage(t *testing.T) {
	conn, dsn := testkit.Open(t)
	exp, err := collector.NewExporter(dsn, collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	tp := newSyncProvider(exp)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	if _, err := rec.Call(instrument.WithThread(context.Background(), "th-bad"), instrument.Turn{Provider: "local", Model: "house-model", Prompt: "hi"},
		func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "ok", Usage: &instrument.Usage{InputTokens: -3, OutputTokens: 2}, CostUSD: ptr(math.NaN())}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := testkit.Strings(t, conn, "SELECT "+usage+" FROM conversations FINAL WHERE role = 'response'")
	if want := "-/2/-"; strings.Join(got, ", ") != want {
		t.Errorf("response turn %q, want %q", got, want)
	}
	if st := exp.Stats(); st.ValuesSanitised != 2 {
		t.Errorf("exporter stats %+v, want 2 values sanitised", st)
	}
}

func count(t *testing.T, conn driver.Conn, query string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestIngesterRefusesInvalidIDs: spans and log records whose ids are
// all-zero or of the wrong length are refused with a reason; the valid
// span beside them is stored.
func TestIngesterRefusesInvalidIDs(t *testing.T) {
	in, conn := newTestIngester(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Hour)
	zeroTrace := chatSpan("b000000000000002", start, "zero trace")
	zeroTrace.TraceId = make([]byte, 16)
	zeroSpan := chatSpan("b000000000000003", start, "zero span")
	zeroSpan.SpanId = make([]byte, 8)
	short := chatSpan("b000000000000004", start, "short span id")
	short.SpanId = []byte{1, 2, 3, 4}
	long := chatSpan("b000000000000005", start, "long trace id")
	long.TraceId = append(mustHex(sanitiseTrace), 1)
	res, err := in.Traces(ctx, traceRequest(zeroTrace, chatSpan("b000000000000001", start, "valid"), zeroSpan, short, long))
	if err != nil || res.Rejected != 4 || !strings.Contains(res.Message, "4 spans refused") {
		t.Errorf("Traces with 4 invalid ids = %+v, %v; want 4 rejected with a reason", res, err)
	}
	if n := count(t, conn, "SELECT count() FROM spans FINAL WHERE span_id = 'b000000000000001'"); n != 1 {
		t.Errorf("valid span stored %d times, want 1", n)
	}
	if n := count(t, conn, "SELECT count() FROM spans FINAL"); n != 1 {
		t.Errorf("%d spans rows, want only the valid span's", n)
	}
	if n := count(t, conn, "SELECT count() FROM conversations FINAL WHERE span_id = 'b000000000000001'"); n != 2 {
		t.Errorf("valid span has %d turns, want 2", n)
	}
	if n := count(t, conn, "SELECT count() FROM conversations FINAL WHERE span_id != 'b000000000000001' OR startsWith(turn_id, ':')"); n != 0 {
		t.Errorf("%d turns of invalid spans stored", n)
	}

	logs := genAILogs("c000000000000001")
	records := logs[0].ScopeLogs[0].LogRecords
	records[0].TraceId = make([]byte, 16)
	records[1].SpanId = []byte{1, 2, 3}
	if res, err := in.Logs(ctx, logs); err != nil || res.Rejected != 2 || res.Message == "" {
		t.Errorf("Logs with 2 invalid ids = %+v, %v; want 2 rejected with a reason", res, err)
	}
}

// TestIngesterFoldsDuplicateSpans: copies of one span in one request give
// one spans row and one call's turns, from the most complete copy.
func TestIngesterFoldsDuplicateSpans(t *testing.T) {
	in, conn := newTestIngester(t)
	start := time.Now().Add(-time.Hour)
	running := chatSpan("d000000000000001", start, "partial")
	running.EndTimeUnixNano = 0
	// Copies need not agree on their start: each yields turns of another
	// sort key, which FINAL cannot fold.
	ended := chatSpan("d000000000000001", start.Add(time.Millisecond), "complete")
	first := chatSpan("d000000000000002", start, "first")
	second := chatSpan("d000000000000002", start.Add(time.Second), "second")
	if res, err := in.Traces(context.Background(), traceRequest(running, first, ended, second)); err != nil || res.Rejected != 0 {
		t.Fatalf("Traces = %+v, %v", res, err)
	}
	if n := count(t, conn, "SELECT count() FROM spans FINAL"); n != 2 {
		t.Errorf("%d spans rows for 2 spans sent twice each, want 2", n)
	}
	if n := count(t, conn, "SELECT count() FROM conversations FINAL"); n != 4 {
		t.Errorf("%d turns for 2 calls sent twice each, want 4", n)
	}
	answers := testkit.Strings(t, conn, "SELECT content FROM conversations FINAL WHERE role = 'response' ORDER BY span_id")
	if got := strings.Join(answers, ","); got != "complete,second" {
		t.Errorf("answers kept %q, want the ended copy's and the later copy's: complete,second", got)
	}
}
