package otlpreceiver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// TestMetrics drives both receivers, sharing one registry, through every
// outcome and reads the counters back from /metrics.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ing := &fakeIngester{}
	opts := []otlpreceiver.Option{otlpreceiver.WithRegistry(reg), otlpreceiver.WithLogger(discardLogger())}
	h := otlpreceiver.NewHTTPHandler(ing, opts...)
	conn := dial(t, startGRPC(t, ing, opts...))

	// HTTP: 1 span stored, 1 span with a repaired string, a malformed
	// request, a wrong content type, then log records that fail to store.
	serve(h, request{path: "/v1/traces", contentType: "application/json", body: readFixture(t, "traces.json")})
	serve(h, request{path: "/v1/traces", contentType: "application/x-protobuf", body: rawTraceRequest([]byte("\xff"), []byte("k"), []byte("v"))})
	serve(h, request{path: "/v1/traces", contentType: "application/x-protobuf", body: []byte("\xff")})
	serve(h, request{path: "/v1/logs", contentType: "text/plain"})
	ing.mu.Lock()
	ing.err = collector.ErrNotStored
	ing.mu.Unlock()
	serve(h, request{path: "/v1/logs", contentType: "application/json", body: readFixture(t, "logs.json")})
	ing.mu.Lock()
	ing.err, ing.result = nil, collector.Result{Rejected: 1, Message: "refused"}
	ing.mu.Unlock()
	// gRPC: 1 span, refused by the ingester.
	if _, err := coltracepb.NewTraceServiceClient(conn).Export(context.Background(), fixtureTraceRequest(t)); err != nil {
		t.Fatal(err)
	}

	_, body := get(t, otlpreceiver.NewOpsHandler(reg, nil), "/metrics")
	for _, want := range []string{
		`convtrace_otlp_received_spans_total{transport="http"} 2`,
		`convtrace_otlp_received_spans_total{transport="grpc"} 1`,
		`convtrace_otlp_received_log_records_total{transport="http"} 1`,
		`convtrace_otlp_received_log_records_total{transport="grpc"} 0`,
		`convtrace_otlp_rejected_spans_total{reason="partial_success",transport="grpc"} 1`,
		`convtrace_otlp_rejected_log_records_total{reason="unavailable",transport="http"} 1`,
		`convtrace_otlp_rejected_requests_total{reason="malformed",signal="traces",transport="http"} 1`,
		`convtrace_otlp_rejected_requests_total{reason="unsupported_media_type",signal="logs",transport="http"} 1`,
		`convtrace_otlp_ingest_failures_total{signal="logs",transport="http"} 1`,
		`convtrace_otlp_ingest_failures_total{signal="traces",transport="http"} 0`,
		`convtrace_otlp_invalid_utf8_repaired_requests_total{signal="traces",transport="http"} 1`,
		`convtrace_otlp_request_duration_seconds_count{signal="traces",transport="http"} 3`,
		`convtrace_otlp_request_duration_seconds_count{signal="logs",transport="http"} 2`,
		`convtrace_otlp_request_duration_seconds_count{signal="traces",transport="grpc"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

func TestOpsHealthAndReadiness(t *testing.T) {
	var readyErr error
	h := otlpreceiver.NewOpsHandler(prometheus.NewRegistry(), func(ctx context.Context) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return readyErr
	})
	for _, c := range []struct {
		name, path string
		readyErr   error
		wantCode   int
		wantBody   string
	}{
		{"healthz", "/healthz", nil, 200, "ok\n"},
		{"healthz while storage is down", "/healthz", errors.New("clickhouse not reachable"), 200, "ok\n"},
		{"readyz ready", "/readyz", nil, 200, "ready\n"},
		{"readyz not ready", "/readyz", errors.New("clickhouse not reachable"), 503, "not ready: clickhouse not reachable\n"},
		{"unknown path", "/nope", nil, 404, "404 page not found\n"},
	} {
		readyErr = c.readyErr
		if code, body := get(t, h, c.path); code != c.wantCode || body != c.wantBody {
			t.Errorf("%s: GET %s = %d %q, want %d %q", c.name, c.path, code, body, c.wantCode, c.wantBody)
		}
	}
	if code, _ := get(t, otlpreceiver.NewOpsHandler(nil, nil), "/readyz"); code != 200 {
		t.Errorf("/readyz without a check = %d, want 200", code)
	}
}
