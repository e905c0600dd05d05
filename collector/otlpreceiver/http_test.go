package otlpreceiver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/collector/otlpwire"
)

const (
	testTraceID  = "5b8efff798038103d269b633813fc60c"
	testSpanID   = "eee19b7ec3c1b174"
	testParentID = "eee19b7ec3c1b173"
	otherSpanID  = "0102030405060708"
)

// testSpans are two finished spans of one trace, as a Go pipeline's SDK
// would export them.
func testSpans(t *testing.T) tracetest.SpanStubs {
	t.Helper()
	tid, err := trace.TraceIDFromHex(testTraceID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := func(span string) trace.SpanContext {
		sid, err := trace.SpanIDFromHex(span)
		if err != nil {
			t.Fatal(err)
		}
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	}
	res := resource.NewSchemaless(attribute.String("service.name", "shipcode"))
	start := time.Unix(1_700_000_000, 0)
	return tracetest.SpanStubs{
		{
			Name: "chat gpt-5", SpanContext: ctx(testSpanID), Parent: ctx(testParentID), SpanKind: trace.SpanKindClient,
			StartTime: start, EndTime: start.Add(time.Second), Resource: res,
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.request.model", "gpt-5"), attribute.Int("gen_ai.usage.input_tokens", 120)},
		},
		{
			Name: "execute_tool read_file", SpanContext: ctx(otherSpanID), Parent: ctx(testSpanID), SpanKind: trace.SpanKindInternal,
			StartTime: start, EndTime: start.Add(time.Millisecond), Resource: res,
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.tool.name", "read_file")},
		},
	}
}

var wantSpans = []struct{ spanID, parentID, name, attr, value string }{
	{testSpanID, testParentID, "chat gpt-5", "gen_ai.usage.input_tokens", "120"},
	{otherSpanID, testSpanID, "execute_tool read_file", "gen_ai.tool.name", "read_file"},
}

// headerLog records the content type and encoding of every request.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Header.Get("Content-Type")+";"+r.Header.Get("Content-Encoding"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, " ")
}

func TestHTTPTracesFromSDKExporter(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []otlptracehttp.Option
		headers string // Content-Type;Content-Encoding the exporter must have sent
	}{
		{"protobuf", nil, "application/x-protobuf;"},
		{"protobuf gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}, "application/x-protobuf;gzip"},
		{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}, "application/json;"},
		{"json gzip", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON), otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}, "application/json;gzip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing := &fakeIngester{}
			var hl headerLog
			srv := httptest.NewServer(hl.wrap(otlpreceiver.NewHTTPHandler(ing)))
			defer srv.Close()
			ctx := context.Background()
			exp, err := otlptracehttp.New(ctx, append(c.opts, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))...)
			if err != nil {
				t.Fatal(err)
			}
			if err := exp.ExportSpans(ctx, testSpans(t).Snapshots()); err != nil {
				t.Fatalf("ExportSpans: %v", err)
			}
			if err := exp.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if got := hl.all(); got != c.headers {
				t.Errorf("exporter sent %q, want %q", got, c.headers)
			}
			got := ing.spans()
			if len(got) != len(wantSpans) {
				t.Fatalf("ingester got %d spans, want %d: %+v", len(got), len(wantSpans), got)
			}
			for i, w := range wantSpans {
				g := got[i]
				if g.traceID != testTraceID || g.spanID != w.spanID || g.parentID != w.parentID || g.name != w.name ||
					g.attrs[w.attr] != w.value || g.service != "shipcode" {
					t.Errorf("span %d = %+v, want trace %s span %s parent %s name %q %s=%s service shipcode",
						i, g, testTraceID, w.spanID, w.parentID, w.name, w.attr, w.value)
				}
			}
		})
	}
}

func TestHTTPLogsFromSDKExporter(t *testing.T) {
	tid, _ := trace.TraceIDFromHex(testTraceID)
	sid, _ := trace.SpanIDFromHex(testSpanID)
	for _, c := range []struct {
		name    string
		opts    []otlploghttp.Option
		headers string
	}{
		{"protobuf", nil, "application/x-protobuf;"},
		{"protobuf gzip", []otlploghttp.Option{otlploghttp.WithCompression(otlploghttp.GzipCompression)}, "application/x-protobuf;gzip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing := &fakeIngester{}
			var hl headerLog
			srv := httptest.NewServer(hl.wrap(otlpreceiver.NewHTTPHandler(ing)))
			defer srv.Close()
			ctx := context.Background()
			exp, err := otlploghttp.New(ctx, append(c.opts, otlploghttp.WithEndpointURL(srv.URL+"/v1/logs"))...)
			if err != nil {
				t.Fatal(err)
			}
			// Through a logger provider, as an instrumentation emits: the
			// record takes its trace and span ids from the context.
			lp := sdklog.NewLoggerProvider(
				sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
				sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "shipcode"))),
			)
			var rec otellog.Record
			rec.SetEventName("gen_ai.user.message")
			rec.SetTimestamp(time.Unix(1_700_000_000, 0))
			rec.SetBody(attribute.StringValue("Review the plan"))
			rec.AddAttributes(attribute.String("gen_ai.system", "openai"))
			spanCtx := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
			lp.Logger("genai").Emit(trace.ContextWithSpanContext(ctx, spanCtx), rec)
			if err := lp.Shutdown(ctx); err != nil { // shuts the exporter down too
				t.Fatal(err)
			}
			if got := hl.all(); got != c.headers {
				t.Errorf("exporter sent %q, want %q", got, c.headers)
			}
			got := ing.logRecords()
			want := storedLog{service: "shipcode", traceID: testTraceID, spanID: testSpanID, eventName: "gen_ai.user.message", body: "Review the plan"}
			if len(got) != 1 || got[0].service != want.service || got[0].traceID != want.traceID || got[0].spanID != want.spanID ||
				got[0].eventName != want.eventName || got[0].body != want.body || got[0].attrs["gen_ai.system"] != "openai" {
				t.Errorf("ingester got %+v, want one record %+v with gen_ai.system=openai", got, want)
			}
		})
	}
}

// TestHTTPJSONFixtures sends OTLP/JSON written from the specification, hex
// ids and all, plain and gzip-encoded.
func TestHTTPJSONFixtures(t *testing.T) {
	for _, gz := range []bool{false, true} {
		ing := &fakeIngester{}
		h := otlpreceiver.NewHTTPHandler(ing)
		for _, path := range []string{"/v1/traces", "/v1/logs"} {
			body := readFixture(t, strings.TrimPrefix(path, "/v1/")+".json")
			rec := serve(h, request{path: path, contentType: "application/json", body: body, gzip: gz})
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("gzip=%v POST %s = %d %s %q, want 200 application/json", gz, path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
		}
		spans, logs := ing.spans(), ing.logRecords()
		if len(spans) != 1 || spans[0].traceID != testTraceID || spans[0].spanID != testSpanID || spans[0].parentID != testParentID ||
			spans[0].attrs["gen_ai.usage.output_tokens"] != "48" || spans[0].attrs["gen_ai.request.model"] != "gpt-5" || spans[0].service != "shipcode" {
			t.Errorf("gzip=%v: spans = %+v", gz, spans)
		}
		if len(logs) != 1 || logs[0].traceID != testTraceID || logs[0].spanID != testSpanID || logs[0].eventName != "gen_ai.user.message" ||
			logs[0].body != "{content=Review the plan}" {
			t.Errorf("gzip=%v: logs = %+v", gz, logs)
		}
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request is a hand-made OTLP/HTTP request.
type request struct {
	method, path, contentType, encoding string
	body                                []byte
	gzip                                bool // compress body and set Content-Encoding: gzip
	chunked                             bool // send without a Content-Length
}

func serve(h http.Handler, r request) *httptest.ResponseRecorder {
	body := r.body
	if r.gzip {
		body = gzipBytes(body)
		r.encoding = "gzip"
	}
	if r.method == "" {
		r.method = http.MethodPost
	}
	req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.encoding != "" {
		req.Header.Set("Content-Encoding", r.encoding)
	}
	if r.chunked {
		req.ContentLength = -1
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// decodeStatus decodes an error response in the format it declares.
func decodeStatus(t *testing.T, rec *httptest.ResponseRecorder) *spb.Status {
	t.Helper()
	st := new(spb.Status)
	var err error
	switch ct := rec.Header().Get("Content-Type"); ct {
	case "application/x-protobuf":
		err = proto.Unmarshal(rec.Body.Bytes(), st)
	case "application/json":
		err = protojson.Unmarshal(rec.Body.Bytes(), st)
	default:
		t.Fatalf("error response has content type %q, want the request's", ct)
	}
	if err != nil {
		t.Fatalf("error response %q is not a google.rpc.Status: %v", rec.Body, err)
	}
	return st
}

// readFixtureProto is the traces fixture as protobuf.
func readFixtureProto(t *testing.T) []byte {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := otlpwire.DecodeJSON(readFixture(t, "traces.json"), &req); err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(&req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHTTPBadInput(t *testing.T) {
	const limit = 64 << 10
	valid := readFixtureProto(t)
	big := bytes.Repeat([]byte{0}, limit+1) // zeros: a run of empty fields, would decode if it fit
	for _, c := range []struct {
		name       string
		req        request
		wantStatus int
		wantMsg    string // in the message
		wantHeader [2]string
	}{
		{"malformed protobuf", request{path: "/v1/traces", contentType: "application/x-protobuf", body: []byte("\x0a\xff\xff\xff\x0fshort")},
			400, "invalid protobuf ExportTraceServiceRequest", [2]string{}},
		{"malformed protobuf logs", request{path: "/v1/logs", contentType: "application/x-protobuf", body: valid[:len(valid)-5]},
			400, "invalid protobuf ExportLogsServiceRequest", [2]string{}},
		{"malformed JSON", request{path: "/v1/traces", contentType: "application/json", body: []byte(`{"resourceSpans": [{]}`)},
			400, "invalid OTLP/JSON ExportTraceServiceRequest", [2]string{}},
		{"JSON of the wrong shape", request{path: "/v1/logs", contentType: "application/json; charset=utf-8", body: []byte(`{"resourceLogs": "x"}`)},
			400, "invalid OTLP/JSON ExportLogsServiceRequest", [2]string{}},
		{"JSON bad id", request{path: "/v1/traces", contentType: "application/json", body: []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz!"}]}]}]}`)},
			400, "traceId", [2]string{}},
		{"not gzip", request{path: "/v1/traces", contentType: "application/x-protobuf", encoding: "gzip", body: valid},
			400, "invalid gzip body", [2]string{}},
		{"truncated gzip", request{path: "/v1/traces", contentType: "application/x-protobuf", encoding: "gzip", body: gzipBytes(valid)[:30]},
			400, "invalid gzip body", [2]string{}},
		{"unsupported encoding", request{path: "/v1/traces", contentType: "application/x-protobuf", encoding: "br", body: valid},
			415, `unsupported content encoding "br"`, [2]string{"Accept-Encoding", "gzip, identity"}},
		{"over the limit", request{path: "/v1/traces", contentType: "application/x-protobuf", body: big},
			413, "exceeds the limit of 65536 bytes", [2]string{}},
		{"over the limit, chunked", request{path: "/v1/traces", contentType: "application/x-protobuf", body: big, chunked: true},
			413, "exceeds the limit of 65536 bytes", [2]string{}},
		{"over the limit after decompression", request{path: "/v1/logs", contentType: "application/json", body: big, gzip: true},
			413, "after decompression", [2]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing := &fakeIngester{}
			rec := serve(otlpreceiver.NewHTTPHandler(ing, otlpreceiver.WithMaxBodySize(limit)), c.req)
			if rec.Code != c.wantStatus {
				t.Fatalf("%+v: status %d %q, want %d", c.req.contentType, rec.Code, rec.Body, c.wantStatus)
			}
			if want := strings.Split(c.req.contentType, ";")[0]; rec.Header().Get("Content-Type") != want {
				t.Errorf("response content type %q, want the request's %q", rec.Header().Get("Content-Type"), want)
			}
			st := decodeStatus(t, rec)
			if !strings.Contains(st.GetMessage(), c.wantMsg) || st.GetCode() != int32(codes.InvalidArgument) {
				t.Errorf("status = code %d %q, want code %d and a message naming %q", st.GetCode(), st.GetMessage(), codes.InvalidArgument, c.wantMsg)
			}
			if h := c.wantHeader; h[0] != "" && rec.Header().Get(h[0]) != h[1] {
				t.Errorf("header %s = %q, want %q", h[0], rec.Header().Get(h[0]), h[1])
			}
			if n := ing.callCount(); n != 0 {
				t.Errorf("the ingester was called %d times for a refused request", n)
			}
		})
	}
}

func TestHTTPRefusedBeforeReading(t *testing.T) {
	for _, c := range []struct {
		name       string
		req        request
		wantStatus int
		wantMsg    string
		wantHeader [2]string
	}{
		{"wrong content type", request{path: "/v1/traces", contentType: "text/plain", body: []byte("x")},
			415, "application/x-protobuf or application/json", [2]string{}},
		{"no content type", request{path: "/v1/logs", body: []byte("x")},
			415, "application/x-protobuf or application/json", [2]string{}},
		{"GET", request{method: http.MethodGet, path: "/v1/traces", contentType: "application/json"},
			405, "POST", [2]string{"Allow", "POST"}},
		{"unknown path", request{path: "/v1/profiles", contentType: "application/x-protobuf"}, 404, "not found", [2]string{}},
	} {
		ing := &fakeIngester{}
		rec := serve(otlpreceiver.NewHTTPHandler(ing), c.req)
		if rec.Code != c.wantStatus || !strings.Contains(rec.Body.String(), c.wantMsg) {
			t.Errorf("%s: %d %q, want %d and a message naming %q", c.name, rec.Code, rec.Body, c.wantStatus, c.wantMsg)
		}
		if h := c.wantHeader; h[0] != "" && rec.Header().Get(h[0]) != h[1] {
			t.Errorf("%s: header %s = %q, want %q", c.name, h[0], rec.Header().Get(h[0]), h[1])
		}
		if ing.callCount() != 0 {
			t.Errorf("%s: the ingester was called", c.name)
		}
	}
}

// TestHTTPGzipBomb sends a few KB of gzip that expand to 32 times the
// limit: the answer is 413, and reading it allocates less than the
// expansion (a handful of limits, race detector included).
func TestHTTPGzipBomb(t *testing.T) {
	const limit = 256 << 10
	const expanded = 32 * limit
	bomb := gzipBytes(make([]byte, expanded))
	if len(bomb) > 16<<10 {
		t.Fatalf("bomb is %d bytes, want a few KB", len(bomb))
	}
	h := otlpreceiver.NewHTTPHandler(&fakeIngester{}, otlpreceiver.WithMaxBodySize(limit))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := serve(h, request{path: "/v1/traces", contentType: "application/x-protobuf", encoding: "gzip", body: bomb})
	runtime.ReadMemStats(&after)

	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("gzip bomb of %d bytes: status %d %q, want 413", len(bomb), rec.Code, rec.Body)
	}
	// Reading the whole expansion would allocate at least expanded bytes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= expanded {
		t.Errorf("reading a %d-byte bomb expanding to %d bytes allocated %d bytes, want < %d (the limit is %d)",
			len(bomb), expanded, alloc, expanded, limit)
	}
}

func TestHTTPIngesterError(t *testing.T) {
	for _, c := range []struct {
		name        string
		contentType string
		opts        []otlpreceiver.Option
		wantAfter   string
	}{
		{"protobuf, default delay", "application/x-protobuf", nil, "5"},
		{"json, delay rounded up", "application/json", []otlpreceiver.Option{otlpreceiver.WithRetryAfter(1500 * time.Millisecond)}, "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing := &fakeIngester{err: fmt.Errorf("%w: clickhouse: connection refused", collector.ErrNotStored)}
			h := otlpreceiver.NewHTTPHandler(ing, append(c.opts, otlpreceiver.WithLogger(discardLogger()))...)
			body := readFixtureProto(t)
			if c.contentType == "application/json" {
				body = readFixture(t, "traces.json")
			}
			rec := serve(h, request{path: "/v1/traces", contentType: c.contentType, body: body})
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != c.wantAfter {
				t.Fatalf("status %d, Retry-After %q; want 503 and %q", rec.Code, rec.Header().Get("Retry-After"), c.wantAfter)
			}
			st := decodeStatus(t, rec)
			if st.GetCode() != int32(codes.Unavailable) || !strings.Contains(st.GetMessage(), "retry") {
				t.Errorf("status = %v, want Unavailable asking to retry", st)
			}
			if strings.Contains(st.GetMessage(), "connection refused") {
				t.Errorf("status %q leaks the storage error to the sender", st.GetMessage())
			}
			var info errdetails.RetryInfo
			if len(st.GetDetails()) != 1 || st.GetDetails()[0].UnmarshalTo(&info) != nil || info.GetRetryDelay().AsDuration().String() != c.wantAfter+"s" {
				t.Errorf("status details = %v, want a RetryInfo of %ss", st.GetDetails(), c.wantAfter)
			}
			if ing.callCount() != 1 {
				t.Errorf("ingester called %d times, want 1 (no retry inside the receiver)", ing.callCount())
			}
		})
	}
}

func TestHTTPPartialSuccess(t *testing.T) {
	const msg = "2 items refused: not GenAI events"
	for _, c := range []struct{ path, contentType string }{
		{"/v1/traces", "application/x-protobuf"},
		{"/v1/traces", "application/json"},
		{"/v1/logs", "application/x-protobuf"},
		{"/v1/logs", "application/json"},
	} {
		name := c.path + " " + c.contentType
		signal := strings.TrimPrefix(c.path, "/v1/")
		body := readFixture(t, signal+".json")
		var resp, req proto.Message
		if signal == "traces" {
			req, resp = new(coltracepb.ExportTraceServiceRequest), new(coltracepb.ExportTraceServiceResponse)
		} else {
			req, resp = new(collogspb.ExportLogsServiceRequest), new(collogspb.ExportLogsServiceResponse)
		}
		unmarshal := protojson.Unmarshal
		if c.contentType == "application/x-protobuf" {
			if err := otlpwire.DecodeJSON(body, req); err != nil {
				t.Fatal(err)
			}
			body, _ = proto.Marshal(req)
			unmarshal = proto.Unmarshal
		}
		ing := &fakeIngester{result: collector.Result{Rejected: 2, Message: msg}}
		rec := serve(otlpreceiver.NewHTTPHandler(ing), request{path: c.path, contentType: c.contentType, body: body})
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != c.contentType {
			t.Fatalf("%s: %d %s, want 200 %s", name, rec.Code, rec.Header().Get("Content-Type"), c.contentType)
		}
		if err := unmarshal(rec.Body.Bytes(), resp); err != nil {
			t.Fatalf("%s: response %q does not decode: %v", name, rec.Body, err)
		}
		var rejected int64
		var gotMsg string
		switch r := resp.(type) {
		case *coltracepb.ExportTraceServiceResponse:
			rejected, gotMsg = r.GetPartialSuccess().GetRejectedSpans(), r.GetPartialSuccess().GetErrorMessage()
		case *collogspb.ExportLogsServiceResponse:
			rejected, gotMsg = r.GetPartialSuccess().GetRejectedLogRecords(), r.GetPartialSuccess().GetErrorMessage()
		}
		if rejected != 2 || gotMsg != msg {
			t.Errorf("%s: partial success = %d %q, want 2 %q", name, rejected, gotMsg, msg)
		}
	}
}

func TestHTTPFullSuccessHasNoPartialSuccess(t *testing.T) {
	rec := serve(otlpreceiver.NewHTTPHandler(&fakeIngester{}), request{path: "/v1/traces", contentType: "application/x-protobuf", body: readFixtureProto(t)})
	var resp coltracepb.ExportTraceServiceResponse
	if err := proto.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != 200 || resp.PartialSuccess != nil {
		t.Errorf("%d %v %v, want 200 without partial_success", rec.Code, &resp, err)
	}
}

func TestHTTPEmptyRequestSkipsIngester(t *testing.T) {
	ing := &fakeIngester{err: errors.New("must not be called")}
	rec := serve(otlpreceiver.NewHTTPHandler(ing), request{path: "/v1/traces", contentType: "application/json", body: []byte(`{}`)})
	if rec.Code != http.StatusOK || ing.callCount() != 0 {
		t.Errorf("empty request: %d, ingester called %d times; want 200 and 0", rec.Code, ing.callCount())
	}
}

func TestHTTPInvalidUTF8Accepted(t *testing.T) {
	body := rawTraceRequest([]byte("chat \xff gpt-5"), []byte("gen_ai.prompt"), []byte("caf\xc3\x28"))
	if err := proto.Unmarshal(body, new(coltracepb.ExportTraceServiceRequest)); err == nil {
		t.Fatal("the payload decodes with proto.Unmarshal; it does not test the repair")
	}
	for _, gz := range []bool{false, true} {
		ing := &fakeIngester{}
		rec := serve(otlpreceiver.NewHTTPHandler(ing), request{path: "/v1/traces", contentType: "application/x-protobuf", body: body, gzip: gz})
		if rec.Code != http.StatusOK {
			t.Fatalf("gzip=%v: status %d %q, want 200", gz, rec.Code, rec.Body)
		}
		spans := ing.spans()
		if len(spans) != 1 || spans[0].name != "chat \uFFFD gpt-5" || spans[0].attrs["gen_ai.prompt"] != "caf\uFFFD(" || spans[0].traceID != testTraceID {
			t.Errorf("gzip=%v: ingester got %+v, want the span with its strings repaired", gz, spans)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
