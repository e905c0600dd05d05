package collector_test

import (
	"context"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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

// benchCalls runs the call through rec. ns/op is the time a call takes
// the caller: every 1,000 calls the timer stops while flush waits for the
// background work (mapping, writing) to catch up, so that the writer keeps
// up and nothing is shed, as at any real pace of provider calls. On 2
// cores that work still competes with the caller; caller-cpu-ns/op is the
// CPU time of the caller's own thread per call, and cpu-ns/op the whole
// process's, the background work included.
func benchCalls(b *testing.B, rec *instrument.Recorder, flush func(context.Context) error) {
	ctx := instrument.WithPhase(instrument.WithThread(context.Background(), "bench"), "execute")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := cpuTime(b, syscall.RUSAGE_SELF)
	var caller time.Duration
	b.ResetTimer()
	start := cpuTime(b, syscall.RUSAGE_THREAD)
	for i := range b.N {
		if _, err := rec.Call(ctx, benchTurn, benchFn); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 || i == b.N-1 {
			b.StopTimer()
			caller += cpuTime(b, syscall.RUSAGE_THREAD) - start
			if err := flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			start = cpuTime(b, syscall.RUSAGE_THREAD)
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(caller)/float64(b.N), "caller-cpu-ns/op")
	b.ReportMetric(float64(cpuTime(b, syscall.RUSAGE_SELF)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user and system CPU time of the process (RUSAGE_SELF)
// or of the calling thread (RUSAGE_THREAD).
func cpuTime(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func noFlush(context.Context) error { return nil }

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
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(noop.NewTracerProvider())), noFlush)
}

// BenchmarkCallStorageDown records through NewTracerProvider while nothing
// listens at the ClickHouse address: the pipeline must not notice.
func BenchmarkCallStorageDown(b *testing.B) {
	tp, err := collector.NewTracerProvider("clickhouse://"+freeAddrB(b)+"/convtrace", collector.WithLogger(discard()))
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)), tp.ForceFlush)
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
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)), tp.ForceFlush)
	// Every call's rows are stored: the writer keeps up, nothing is shed.
	st := tp.Stats()
	b.ReportMetric(float64(st.Written)/float64(b.N), "rows/op")
	b.ReportMetric(float64(st.Lost)/float64(b.N), "lost/op")
}

// BenchmarkCallSDKNoExporter records with the OTel SDK and no processor: the
// price any OTel instrumentation pays for a span with two events, and the
// baseline BENCHMARKS.md divides by.
func BenchmarkCallSDKNoExporter(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	benchCalls(b, instrument.NewRecorder(instrument.WithTracerProvider(tp)), tp.ForceFlush)
}
