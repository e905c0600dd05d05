package testkit

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// OTLPSignal names an OTLP signal as the last segment of its OTLP/HTTP path.
type OTLPSignal string

// The signals an OTLPCapture accepts.
const (
	OTLPTraces  OTLPSignal = "traces"
	OTLPLogs    OTLPSignal = "logs"
	OTLPMetrics OTLPSignal = "metrics"
)

// OTLPRequest is one OTLP/HTTP export request as an OTLPCapture received it.
type OTLPRequest struct {
	Signal          OTLPSignal
	ContentType     string
	ContentEncoding string
	// Encoding is "protobuf" or "json": how the body was written.
	Encoding string
	// Raw is the body without its Content-Encoding; JSON is the request
	// as OTLP/JSON (hex ids), whatever its wire encoding was.
	Raw  []byte `json:"-"`
	JSON []byte `json:"-"`
	// Message is an *ExportTraceServiceRequest, *ExportLogsServiceRequest
	// or *ExportMetricsServiceRequest.
	Message  proto.Message `json:"-"`
	Spans    int
	Logs     int
	Received time.Time
}

// OTLPCaptureOption configures an OTLPCapture.
type OTLPCaptureOption interface{ apply(*captureConfig) }

type captureConfig struct {
	forward http.Handler
	// decodeJSON and decodeProto replace the strict decoders.
	decodeJSON, decodeProto func([]byte, proto.Message) error
}

type captureOptionFunc func(*captureConfig)

func (f captureOptionFunc) apply(c *captureConfig) { f(c) }

// WithForward hands every captured traces and logs request, as it came, to
// h (such as a convtrace receiver), whose answer the sender gets.
func WithForward(h http.Handler) OTLPCaptureOption {
	return captureOptionFunc(func(c *captureConfig) { c.forward = h })
}

// WithDecoders decodes bodies with decodeJSON and decodeProto instead, such
// as convtrace's receiver's (collector/otlpwire, which testkit may not
// import: its tests use testkit), which ignore unknown JSON fields and
// replace invalid UTF-8. By default either is a capture error, so a
// sender's deviation shows.
func WithDecoders(decodeJSON, decodeProto func([]byte, proto.Message) error) OTLPCaptureOption {
	return captureOptionFunc(func(c *captureConfig) { c.decodeJSON, c.decodeProto = decodeJSON, decodeProto })
}

// OTLPCapture is an OTLP/HTTP receiver on loopback that keeps every export
// request to /v1/traces, /v1/logs and /v1/metrics: protobuf or JSON, gzip
// or not.
type OTLPCapture struct {
	srv *httptest.Server
	cfg captureConfig

	mu     sync.Mutex
	reqs   []OTLPRequest
	errors []string
	notify chan struct{}
}

// NewOTLPCapture starts a capture server on a free loopback port, closed
// when t ends.
func NewOTLPCapture(t testing.TB, opts ...OTLPCaptureOption) *OTLPCapture {
	t.Helper()
	c := &OTLPCapture{notify: make(chan struct{}, 1)}
	for _, o := range opts {
		o.apply(&c.cfg)
	}
	c.srv = LoopbackServer(http.HandlerFunc(c.serveHTTP))
	t.Cleanup(c.Close)
	return c
}

// URL is the base endpoint for OTEL_EXPORTER_OTLP_ENDPOINT (exporters
// append /v1/<signal>).
func (c *OTLPCapture) URL() string { return c.srv.URL }

// Close stops the server; it may be called more than once.
func (c *OTLPCapture) Close() { c.srv.Close() }

// Requests returns a copy of every request captured so far, in arrival order.
func (c *OTLPCapture) Requests() []OTLPRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]OTLPRequest(nil), c.reqs...)
}

// Errors returns why each refused request was refused.
func (c *OTLPCapture) Errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

// Reset forgets every captured request and error.
func (c *OTLPCapture) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = nil
	c.errors = nil
}

// WaitFor waits until cond holds for the captured requests or timeout
// passes, and reports whether it held.
func (c *OTLPCapture) WaitFor(timeout time.Duration, cond func([]OTLPRequest) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if cond(c.Requests()) {
			return true
		}
		select {
		case <-c.notify:
		case <-deadline.C:
			return cond(c.Requests())
		}
	}
}

// Counts returns how many spans and log records were captured.
func (c *OTLPCapture) Counts() (spans, logs int) {
	for _, r := range c.Requests() {
		spans += r.Spans
		logs += r.Logs
	}
	return spans, logs
}

// Traces merges every captured traces request into one, keeping every
// resource, scope and span as sent, in arrival order.
func (c *OTLPCapture) Traces() *coltracepb.ExportTraceServiceRequest {
	out := &coltracepb.ExportTraceServiceRequest{}
	for _, r := range c.Requests() {
		if m, ok := r.Message.(*coltracepb.ExportTraceServiceRequest); ok {
			out.ResourceSpans = append(out.ResourceSpans, proto.Clone(m).(*coltracepb.ExportTraceServiceRequest).ResourceSpans...)
		}
	}
	return out
}

// Logs merges every captured logs request into one, like Traces.
func (c *OTLPCapture) Logs() *collogspb.ExportLogsServiceRequest {
	out := &collogspb.ExportLogsServiceRequest{}
	for _, r := range c.Requests() {
		if m, ok := r.Message.(*collogspb.ExportLogsServiceRequest); ok {
			out.ResourceLogs = append(out.ResourceLogs, proto.Clone(m).(*collogspb.ExportLogsServiceRequest).ResourceLogs...)
		}
	}
	return out
}

// Metrics merges every captured metrics request into one, like Traces.
func (c *OTLPCapture) Metrics() *colmetricspb.ExportMetricsServiceRequest {
	out := &colmetricspb.ExportMetricsServiceRequest{}
	for _, r := range c.Requests() {
		if m, ok := r.Message.(*colmetricspb.ExportMetricsServiceRequest); ok {
			out.ResourceMetrics = append(out.ResourceMetrics, proto.Clone(m).(*colmetricspb.ExportMetricsServiceRequest).ResourceMetrics...)
		}
	}
	return out
}

func (c *OTLPCapture) fail(w http.ResponseWriter, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.errors = append(c.errors, msg)
	c.mu.Unlock()
	http.Error(w, msg, code)
}

func (c *OTLPCapture) serveHTTP(w http.ResponseWriter, r *http.Request) {
	sig := OTLPSignal(strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), "/v1/"))
	switch sig {
	case OTLPTraces, OTLPLogs, OTLPMetrics:
	default:
		c.fail(w, http.StatusNotFound, "unexpected path %s %s", r.Method, r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		c.fail(w, http.StatusMethodNotAllowed, "unexpected method %s %s", r.Method, r.URL.Path)
		return
	}
	// wire is kept as sent for the forward handler.
	wire, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		c.fail(w, http.StatusBadRequest, "%s: read body: %v", r.URL.Path, err)
		return
	}
	raw := wire
	ce := r.Header.Get("Content-Encoding")
	switch strings.ToLower(ce) {
	case "", "identity":
	case "gzip":
		if raw, err = gunzip(wire); err != nil {
			c.fail(w, http.StatusBadRequest, "%s: gzip: %v", r.URL.Path, err)
			return
		}
	default:
		c.fail(w, http.StatusUnsupportedMediaType, "%s: unsupported Content-Encoding %q", r.URL.Path, ce)
		return
	}
	ct := r.Header.Get("Content-Type")
	enc := "protobuf"
	if strings.Contains(strings.ToLower(ct), "json") {
		enc = "json"
	}
	msg := newExportRequest(sig)
	if err := c.decode(enc, raw, msg); err != nil {
		c.fail(w, http.StatusBadRequest, "%s: decode %s body (%s): %v", r.URL.Path, enc, ct, err)
		return
	}
	js, err := MarshalOTLPJSON(msg)
	if err != nil {
		c.fail(w, http.StatusInternalServerError, "%s: re-encode as JSON: %v", r.URL.Path, err)
		return
	}
	rec := OTLPRequest{
		Signal: sig, ContentType: ct, ContentEncoding: ce, Encoding: enc,
		Raw: raw, JSON: js, Message: msg, Received: time.Now(),
	}
	rec.Spans, rec.Logs = countItems(msg)
	c.mu.Lock()
	c.reqs = append(c.reqs, rec)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	if c.cfg.forward != nil && sig != OTLPMetrics {
		fr, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, r.URL.Path, bytes.NewReader(wire))
		fr.Header = r.Header.Clone()
		c.cfg.forward.ServeHTTP(w, fr)
		return
	}
	// An empty response message encodes as "{}" in JSON and as no bytes in
	// protobuf.
	if enc == "json" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (c *OTLPCapture) decode(enc string, body []byte, msg proto.Message) error {
	switch {
	case enc == "json" && c.cfg.decodeJSON != nil:
		return c.cfg.decodeJSON(body, msg)
	case enc == "json":
		return UnmarshalOTLPJSON(body, msg)
	case c.cfg.decodeProto != nil:
		return c.cfg.decodeProto(body, msg)
	default:
		return proto.Unmarshal(body, msg)
	}
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, 64<<20))
}

func newExportRequest(sig OTLPSignal) proto.Message {
	switch sig {
	case OTLPTraces:
		return &coltracepb.ExportTraceServiceRequest{}
	case OTLPLogs:
		return &collogspb.ExportLogsServiceRequest{}
	default:
		return &colmetricspb.ExportMetricsServiceRequest{}
	}
}

func countItems(msg proto.Message) (spans, logs int) {
	switch m := msg.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans += len(ss.Spans)
			}
		}
	case *collogspb.ExportLogsServiceRequest:
		for _, rl := range m.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				logs += len(sl.LogRecords)
			}
		}
	}
	return spans, logs
}
