package collector_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/internal/testkit"
)

// benchRequest is one OTLP export of n GenAI chat spans with their messages
// as attributes (about 600 bytes of content each), as an OpenTelemetry SDK
// with a GenAI instrumentation sends them.
func benchRequest(n int) *coltracepb.ExportTraceServiceRequest {
	start := uint64(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	spans := make([]*tracepb.Span, n)
	for i := range spans {
		id := fmt.Sprintf("%016x", i+1)
		spans[i] = &tracepb.Span{
			TraceId: mustHex(fmt.Sprintf("%032x", i/10+1)), SpanId: mustHex(id), Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
			StartTimeUnixNano: start + uint64(i)*1000, EndTimeUnixNano: start + uint64(i)*1000 + 900,
			Attributes: []*commonpb.KeyValue{
				kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"), kv("gen_ai.request.model", "gpt-4o"),
				kv("gen_ai.conversation.id", fmt.Sprintf("conv-%d", i/10)), ikv("gen_ai.usage.input_tokens", 420), ikv("gen_ai.usage.output_tokens", 96),
				kv("gen_ai.input.messages", `[{"role":"system","parts":[{"type":"text","content":"You are a careful reviewer of Go code. Answer briefly."}]},{"role":"user","parts":[{"type":"text","content":"Review this change: the writer now acknowledges stored rows, sends at once after a quiet spell and at most once per interval under load. Is the back-off right when ClickHouse is down for minutes?"}]}]`),
				kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Mostly. The back-off doubles to 5 s, so a long outage costs one failed dial per 5 s, and every batch meanwhile fails fast and is counted. Consider logging once per outage rather than per batch."}],"finish_reason":"stop"}]`),
			},
		}
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}}
}

const (
	benchSpansPerRequest = 1000
	benchClients         = 32
)

// BenchmarkIngestOTLPHTTP posts protobuf OTLP requests of 1,000 spans to the
// OTLP/HTTP receiver from benchClients concurrent clients; each request returns once
// its rows are stored. Run with -cpu 1 for spans/s per core.
func BenchmarkIngestOTLPHTTP(b *testing.B) {
	_, dsn := testkit.Open(b)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(time.Second), collector.WithBatchSize(50_000), collector.WithQueueBytes(otlpreceiver.DefaultMemoryLimit))
	if err != nil {
		b.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	srv := httptest.NewServer(otlpreceiver.NewHTTPHandler(in))
	defer srv.Close()
	body, err := proto.Marshal(benchRequest(benchSpansPerRequest))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	requests := make(chan struct{})
	var retries atomic.Int64
	var wg sync.WaitGroup
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range requests {
				// As an SDK does, a request answered retry-later is sent
				// again; the wait is short, so the figure is the receiver's.
				for {
					resp, err := http.Post(srv.URL+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
					if resp.StatusCode != http.StatusServiceUnavailable {
						b.Errorf("status %d", resp.StatusCode)
						break
					}
					retries.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	for range b.N {
		requests <- struct{}{}
	}
	close(requests)
	wg.Wait()
	b.ReportMetric(float64(b.N*benchSpansPerRequest)/time.Since(start).Seconds(), "spans/s")
	b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
}

// BenchmarkInsertClickHouseOnly is the baseline: the rows of one request,
// mapped beforehand, written with clickhouse-go batches and nothing else,
// one request's rows per insert.
func BenchmarkInsertClickHouseOnly(b *testing.B) {
	conn, _ := testkit.Open(b)
	turns, spans := collector.RowsOf(benchRequest(benchSpansPerRequest).ResourceSpans)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := collector.InsertRows(context.Background(), conn, turns, spans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchSpansPerRequest)/time.Since(start).Seconds(), "spans/s")
}

// BenchmarkIngestLogForm stores calls sent as the official OTel
// instrumentations send them: a span without content and three log
// records (system, user, answer), each record a request of its own, from
// benchClients concurrent senders. One op is one call; calls/s is the
// figure.
func BenchmarkIngestLogForm(b *testing.B) {
	_, dsn := testkit.Open(b)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(time.Second), collector.WithBatchSize(50_000))
	if err != nil {
		b.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	start := uint64(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	call := func(i int) {
		trace, span := mustHex(fmt.Sprintf("%032x", i+1)), mustHex(fmt.Sprintf("%016x", i+1))
		at := start + uint64(i)*1000
		message := func(event string, body ...*commonpb.KeyValue) []*logspb.ResourceLogs {
			return []*logspb.ResourceLogs{{Resource: otlpResource, ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{
				TimeUnixNano: at, EventName: event, TraceId: trace, SpanId: span,
				Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: body}}},
			}}}}}}
		}
		for _, logs := range [][]*logspb.ResourceLogs{
			message("gen_ai.system.message", kv("content", "You are a careful reviewer of Go code. Answer briefly.")),
			message("gen_ai.user.message", kv("content", "Is the back-off right when ClickHouse is down for minutes?")),
			message("gen_ai.choice", ikv("index", 0), kv("finish_reason", "stop"), &commonpb.KeyValue{Key: "message", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("content", "Mostly; log once per outage.")}}}}}),
		} {
			if _, err := in.Logs(context.Background(), logs); err != nil {
				b.Error(err)
			}
		}
		spans := []*tracepb.ResourceSpans{{Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: trace, SpanId: span, Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
			StartTimeUnixNano: at, EndTimeUnixNano: at + 900,
			Attributes: []*commonpb.KeyValue{kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
				kv("gen_ai.request.model", "gpt-4o"), ikv("gen_ai.usage.input_tokens", 420), ikv("gen_ai.usage.output_tokens", 96)},
		}}}}}}
		if _, err := in.Traces(context.Background(), spans); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	begin := time.Now()
	calls := make(chan int)
	var wg sync.WaitGroup
	for range benchClients {
		wg.Go(func() {
			for i := range calls {
				call(i)
			}
		})
	}
	for i := range b.N {
		calls <- i
	}
	close(calls)
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "calls/s")
}
