package llmhttp_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/llmhttp"
)

func spanClient(t *testing.T) (*http.Client, *tracetest.SpanRecorder) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	return &http.Client{Transport: llmhttp.NewTransport(nil, llmhttp.WithRecorder(rec))}, sr
}

// A body that is not what the API promises is passed through as it is and
// the call is still recorded.
func TestUnparsableBody(t *testing.T) {
	const garbage = "{\"choices\": [ this is not json \x00\xff"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, garbage)
	}))
	defer srv.Close()
	hc, sr := spanClient(t)
	resp, err := hc.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != garbage {
		t.Errorf("client read %q, want %q", got, garbage)
	}
	spans := sr.Ended()
	if len(spans) != 1 || spans[0].Name() != "chat m" || len(spans[0].Events()) != 2 {
		t.Fatalf("want one chat m span with prompt and response events, got %d spans", len(spans))
	}
}

// A stream the client abandons ends its span at Close, once, with what
// arrived so far.
func TestStreamClosedEarly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"model":"m-1","choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	hc, sr := spanClient(t)
	resp, err := hc.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.Contains(line, "Hel") {
		t.Fatalf("client read %q", line)
	}
	if n := len(sr.Ended()); n != 0 {
		t.Fatalf("span ended before the body: %d spans", n)
	}
	resp.Body.Close()
	resp.Body.Close()
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1", len(spans))
	}
	if spans[0].Status().Code == codes.Error {
		t.Errorf("status %v", spans[0].Status())
	}
	var content string
	for _, a := range spans[0].Events()[1].Attributes {
		if a.Key == "convtrace.content" {
			content = a.Value.AsString()
		}
	}
	if content != "Hel" {
		t.Errorf("response content %q, want %q", content, "Hel")
	}
}
