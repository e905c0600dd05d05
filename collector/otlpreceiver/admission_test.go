package otlpreceiver_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/convtrace/convtrace/collector/otlpreceiver"
)

func TestTokenGuardsHTTPAndMetrics(t *testing.T) {
	ing := &fakeIngester{}
	h := otlpreceiver.NewHTTPHandler(ing, otlpreceiver.WithToken("s3cret"), otlpreceiver.WithLogger(discardLogger()))
	ops := otlpreceiver.NewOpsHandler(nil, nil, otlpreceiver.WithToken("s3cret"))
	body := readFixtureProto(t)
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"s3cret", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("POST /v1/traces with Authorization %q: %d, want %d", c.auth, rec.Code, c.want)
		}
		req = httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec = httptest.NewRecorder()
		ops.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET /metrics with Authorization %q: %d, want %d", c.auth, rec.Code, c.want)
		}
	}
	if n := ing.callCount(); n != 1 {
		t.Errorf("the ingester got %d requests, want only the one with the token", n)
	}
	if code, _ := get(t, ops, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz without a token: %d, want 200 (probes stay open)", code)
	}
}

func TestTokenGuardsGRPC(t *testing.T) {
	ing := &fakeIngester{}
	addr := startGRPC(t, ing, otlpreceiver.WithToken("s3cret"))
	client := coltracepb.NewTraceServiceClient(dial(t, addr))
	for _, c := range []struct {
		auth string
		want codes.Code
	}{{"", codes.Unauthenticated}, {"Bearer wrong", codes.Unauthenticated}, {"Bearer s3cret", codes.OK}} {
		ctx := context.Background()
		if c.auth != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", c.auth)
		}
		_, err := client.Export(ctx, fixtureTraceRequest(t))
		if got := status.Code(err); got != c.want {
			t.Errorf("Export with authorization %q: %v (%v), want %v", c.auth, got, err, c.want)
		}
	}
	if n := ing.callCount(); n != 1 {
		t.Errorf("the ingester got %d requests, want only the one with the token", n)
	}
}

// A request the memory limit has no room for is refused retry-later while
// another holds the room, and accepted once it is free.
func TestMemoryLimitRefusesRetryLater(t *testing.T) {
	body := readFixtureProto(t)
	limit := int64(len(body)) * 4 // one request's share
	for _, transport := range []string{"http", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			ing := &fakeIngester{hold: make(chan struct{})}
			opts := []otlpreceiver.Option{otlpreceiver.WithMemoryLimit(limit), otlpreceiver.WithLogger(discardLogger()), otlpreceiver.WithRetryAfter(2 * time.Second)}
			send := sendHTTP(t, otlpreceiver.NewHTTPHandler(ing, opts...), body)
			if transport == "grpc" {
				send = sendGRPC(t, startGRPC(t, ing, opts...))
			}
			var wg sync.WaitGroup
			first := make(chan string, 1)
			wg.Go(func() { first <- send() })
			// The first holds its share once it waits in the ingester.
			for deadline := time.Now().Add(5 * time.Second); ing.waitingCount() == 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if got := send(); got != "retry" {
				t.Errorf("a second request while the first holds the limit: %s, want retry", got)
			}
			close(ing.hold)
			wg.Wait()
			if got := <-first; got != "ok" {
				t.Errorf("the first request: %s, want ok", got)
			}
			if got := send(); got != "ok" {
				t.Errorf("a request once the limit is free: %s, want ok", got)
			}
		})
	}
}

// A request storage does not take within the store timeout is answered
// retry-later instead of hanging.
func TestStoreTimeoutAnswersRetryLater(t *testing.T) {
	ing := &fakeIngester{hold: make(chan struct{})}
	defer close(ing.hold)
	h := otlpreceiver.NewHTTPHandler(ing, otlpreceiver.WithStoreTimeout(200*time.Millisecond), otlpreceiver.WithLogger(discardLogger()))
	done := make(chan string, 1)
	go func() { done <- sendHTTP(t, h, readFixtureProto(t))() }()
	select {
	case got := <-done:
		if got != "retry" {
			t.Errorf("a request storage holds: %s, want retry", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request storage holds is still waiting after 5 s with a 200 ms store timeout")
	}
}

// sendHTTP returns a function that posts body and says ok, retry (503 with
// Retry-After) or the status.
func sendHTTP(t *testing.T, h http.Handler, body []byte) func() string {
	return func() string {
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			return "ok"
		case rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "":
			return "retry"
		}
		return http.StatusText(rec.Code)
	}
}

// sendGRPC returns a function that exports the fixture over gRPC and says
// ok, retry (a retryable code with RetryInfo) or the code.
func sendGRPC(t *testing.T, addr string) func() string {
	client := coltracepb.NewTraceServiceClient(dial(t, addr))
	req := fixtureTraceRequest(t)
	return func() string {
		_, err := client.Export(context.Background(), req, grpc.WaitForReady(true))
		st := status.Convert(err)
		switch {
		case err == nil:
			return "ok"
		case (st.Code() == codes.ResourceExhausted || st.Code() == codes.Unavailable) && len(st.Details()) > 0:
			return "retry"
		}
		return st.Code().String()
	}
}
