package collector_test

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
)

func kv(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func ikv(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var otlpResource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", "py-agents")}}

// genAISpan is an OTel GenAI chat span; with content false its messages come
// as log records.
func genAISpan(spanID string, content bool) []*tracepb.ResourceSpans {
	start := uint64(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	attrs := []*commonpb.KeyValue{
		kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
		kv("gen_ai.request.model", "gpt-4o"), kv("gen_ai.response.model", "gpt-4o-2024-08-06"),
		kv("gen_ai.conversation.id", "conv-7"), ikv("gen_ai.usage.input_tokens", 42), ikv("gen_ai.usage.output_tokens", 7),
	}
	if content {
		attrs = append(attrs,
			kv("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`),
			kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Rainy, 57°F"}],"finish_reason":"stop"}]`))
	}
	return []*tracepb.ResourceSpans{{
		Resource: otlpResource,
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: mustHex("5b8efff798038103d269b633813fc60c"), SpanId: mustHex(spanID),
			Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
			StartTimeUnixNano: start, EndTimeUnixNano: start + uint64(time.Second),
			Attributes: attrs,
		}}}},
	}}
}

func genAILogs(spanID string, extra ...*logspb.LogRecord) []*logspb.ResourceLogs {
	t := uint64(time.Date(2026, 11, 1, 12, 0, 0, 500, time.UTC).UnixNano())
	records := []*logspb.LogRecord{
		{TimeUnixNano: t, EventName: "gen_ai.user.message", TraceId: mustHex("5b8efff798038103d269b633813fc60c"), SpanId: mustHex(spanID),
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("content", "Weather in Paris?")}}}}},
		{TimeUnixNano: t + 1, EventName: "gen_ai.choice", TraceId: mustHex("5b8efff798038103d269b633813fc60c"), SpanId: mustHex(spanID),
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
				ikv("index", 0), kv("finish_reason", "stop"),
				{Key: "message", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("content", "Rainy, 57°F")}}}}},
			}}}}},
	}
	return []*logspb.ResourceLogs{{Resource: otlpResource, ScopeLogs: []*logspb.ScopeLogs{{LogRecords: append(records, extra...)}}}}
}

type turnRow struct{ Role, Content, Model, Provider, Project, Thread string }

func TestIngesterTracesAndLogs(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithJoinWindow(time.Second), collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	ctx := context.Background()

	read := func(spanID string) []turnRow {
		rows, err := conn.Query(ctx, "SELECT role, content, model, provider, project, thread_id FROM conversations FINAL WHERE span_id = ? ORDER BY seq", spanID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []turnRow
		for rows.Next() {
			var r turnRow
			if err := rows.Scan(&r.Role, &r.Content, &r.Model, &r.Provider, &r.Project, &r.Thread); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	want := func() []turnRow {
		return []turnRow{
			{"prompt", `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`, "gpt-4o-2024-08-06", "openai", "py-agents", "conv-7"},
			{"response", "Rainy, 57°F", "gpt-4o-2024-08-06", "openai", "py-agents", "conv-7"},
		}
	}
	check := func(name, spanID string) {
		t.Helper()
		got, w := read(spanID), want()
		if len(got) != len(w) {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
			return
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s turn %d:\n got %+v\nwant %+v", name, i, got[i], w[i])
			}
		}
	}

	// Span attributes carry the content: stored when Traces returns.
	if _, err := in.Traces(ctx, genAISpan("1111111111111111", true)); err != nil {
		t.Fatal(err)
	}
	check("span-attribute form", "1111111111111111")

	// Log records first, their span later: stored when the span arrives.
	res, err := in.Logs(ctx, genAILogs("2222222222222222", &logspb.LogRecord{Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "GET /health 200"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 1 || res.Message == "" {
		t.Errorf("a plain log record beside GenAI events: result %+v, want 1 rejected with a reason", res)
	}
	if got := read("2222222222222222"); len(got) != 0 {
		t.Errorf("turns stored before their span arrived: %+v", got)
	}
	if _, err := in.Traces(ctx, genAISpan("2222222222222222", false)); err != nil {
		t.Fatal(err)
	}
	check("log-record form", "2222222222222222")

	// Span first, log records later.
	if _, err := in.Traces(ctx, genAISpan("3333333333333333", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Logs(ctx, genAILogs("3333333333333333")); err != nil {
		t.Fatal(err)
	}
	check("span then logs", "3333333333333333")

	// Log records whose span never comes are written when the window ends.
	if _, err := in.Logs(ctx, genAILogs("4444444444444444")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(read("4444444444444444")) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := read("4444444444444444"); len(got) != 2 || got[0].Content != want()[0].Content || got[1].Content != "Rainy, 57°F" {
		t.Errorf("orphan log records after the window: %+v", got)
	}

	// The sweep counts its write after the turns are stored.
	for in.Stats().Joined < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := in.Stats()
	// Every provider call span is staged (staging.go), the one with its
	// content on it too, so 9 records; the 4 calls are joined, one maybe
	// twice (a request and a sweep may both write a call, which storage
	// folds).
	if st.SpansReceived != 3 || st.LogsReceived != 7 || st.LogsRejected != 1 || st.Staged != 9 || st.Joined < 4 || st.MapFailures != 0 {
		t.Errorf("stats = %+v", st)
	}
	var spanRows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM spans FINAL").Scan(&spanRows); err != nil || spanRows != 3 {
		t.Errorf("spans rows = %d (%v), want 3", spanRows, err)
	}
	if err := in.Ready(ctx); err != nil {
		t.Errorf("Ready with storage up: %v", err)
	}
}

func TestIngesterStorageDownIsNotStored(t *testing.T) {
	in, err := collector.NewIngester("clickhouse://"+freeAddr(t)+"/convtrace", collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	_, err = in.Traces(context.Background(), genAISpan("5555555555555555", true))
	if !errors.Is(err, collector.ErrNotStored) {
		t.Errorf("Traces with storage down returned %v, want ErrNotStored", err)
	}
	if err := in.Ready(context.Background()); err == nil {
		t.Error("Ready with storage down returned nil")
	}
}

func TestIngesterKeepsValidSpansBesideUnmappableOnes(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	req := genAISpan("6666666666666666", true)
	bad := genAISpan("7777777777777777", false)[0].ScopeSpans[0].Spans[0]
	bad.Attributes = append(bad.Attributes, kv("gen_ai.input.messages", `{"role": "user", "parts": [`), ikv("gen_ai.usage.input_tokens", -5))
	req[0].ScopeSpans[0].Spans = append(req[0].ScopeSpans[0].Spans, bad)
	if _, err := in.Traces(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var spans, goodTurns uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM spans").Scan(&spans); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations WHERE span_id = '6666666666666666'").Scan(&goodTurns); err != nil {
		t.Fatal(err)
	}
	if spans != 2 || goodTurns != 2 {
		t.Errorf("a request with one malformed span: %d span rows and %d turns of the valid span; want 2 and 2", spans, goodTurns)
	}
}
