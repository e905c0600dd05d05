package collector_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
)

// The recording overhead of one provider call. Each benchmark runs the same
// call: a 2 KB prompt, a 1 KB response with usage and cost.
var (
	benchTurn = instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: strings.Repeat("p", 2048)}
	benchResp = instrument.Response{Content: strings.Repeat("r", 1024), Usage: &instrument.Usage{InputTokens: 512, OutputTokens: 256}, CostUSD: ptr(0.01)}
	benchFn   = func(context.Context) (instrument.Response, error) { return benchResp, nil }
)

func benchCalls(b *testing.B, rec *instrument.Recorder) {
	ctx := instrument.WithPhase(instrument.WithThread(context.Background(), "bench"), "execute")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := rec.Call(ctx, benchTurn, benchFn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallUninstrumented is the baseline: the provider call with no
// recording at all.
func BenchmarkCallUninstrumented(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := benchFn(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallNoopTracer records with a tracer that drops everything: the
// cost of the instrument API itself.
func BenchmarkCallNoopTracer(b *testing.B) {
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(noop.NewTracerProvider())))
}

// BenchmarkCallStorageDown records through NewTracerProvider while nothing
// listens at the ClickHouse address: the pipeline must not notice.
func BenchmarkCallStorageDown(b *testing.B) {
	tp, err := collector.NewTracerProvider("clickhouse://"+freeAddrB(b)+"/convtrace", collector.WithLogger(discard()))
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)))
}

// BenchmarkCallStorageUp records through NewTracerProvider into a running
// ClickHouse.
func BenchmarkCallStorageUp(b *testing.B) {
	_, dsn := testkit.Open(b)
	tp, err := collector.NewTracerProvider(dsn, collector.WithLogger(discard()))
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)))
}

// BenchmarkCallSDKNoExporter records with the OTel SDK and no processor: the
// price any OTel instrumentation pays for a span with two events, and the
// baseline BENCHMARKS.md divides by.
func BenchmarkCallSDKNoExporter(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)))
}
