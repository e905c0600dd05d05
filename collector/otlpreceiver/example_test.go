package otlpreceiver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/signal"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
)

// The receivers of `convtrace serve`: OTLP/HTTP on 4318, OTLP/gRPC on 4317
// and the operator endpoints on 9464, all counting into one registry, all
// storing through the collector's ClickHouse ingester.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background())
	defer stop()

	ing, err := collector.NewIngester("clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	opts := []otlpreceiver.Option{otlpreceiver.WithRegistry(reg), otlpreceiver.WithMaxBodySize(16 << 20)}

	grpcSrv := otlpreceiver.NewGRPCServer(ing, opts...)
	httpSrv := &http.Server{Addr: "127.0.0.1:4318", Handler: otlpreceiver.NewHTTPHandler(ing, opts...), ReadHeaderTimeout: 10 * time.Second}
	opsSrv := &http.Server{Addr: "127.0.0.1:9464", Handler: otlpreceiver.NewOpsHandler(reg, ing.Ready), ReadHeaderTimeout: 10 * time.Second}

	ln, err := net.Listen("tcp", "127.0.0.1:4317")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = grpcSrv.Serve(ln) }()
	go func() { _ = httpSrv.ListenAndServe() }()
	go func() { _ = opsSrv.ListenAndServe() }()

	<-ctx.Done()
	// Stop taking requests first, then let the ingester store what it holds.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	grpcSrv.GracefulStop()
	_ = httpSrv.Shutdown(shutdownCtx)
	_ = opsSrv.Shutdown(shutdownCtx)
	if err := ing.Shutdown(shutdownCtx); err != nil {
		log.Print(err)
	}
}

// printer is an Ingester that prints what it is given.
type printer struct{ fail bool }

func (p printer) Traces(_ context.Context, rs []*tracepb.ResourceSpans) (collector.Result, error) {
	if p.fail {
		return collector.Result{}, errors.New("storage down")
	}
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				fmt.Printf("span %x %q\n", s.GetSpanId(), s.GetName())
			}
		}
	}
	return collector.Result{}, nil
}

func (printer) Logs(context.Context, []*logspb.ResourceLogs) (collector.Result, error) {
	return collector.Result{}, nil
}

// An OTLP/JSON request, its ids in hex as the specification writes them,
// and what the sender is told when storage fails.
func ExampleNewHTTPHandler() {
	const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[
		{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"chat gpt-5"}]}]}]}`
	for _, ing := range []printer{{}, {fail: true}} {
		h := otlpreceiver.NewHTTPHandler(ing, otlpreceiver.WithLogger(discardLogger()))
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%d Retry-After=%q\n", rec.Code, rec.Header().Get("Retry-After"))
	}
	// Output:
	// span eee19b7ec3c1b174 "chat gpt-5"
	// 200 Retry-After=""
	// 503 Retry-After="5"
}
