package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/internal/testkit"
)

// acked counts what an OTLP exporter had acknowledged: an export that
// returned without error.
type acked struct{ n atomic.Int64 }

type ackedLogs struct {
	sdklog.Exporter
	a *acked
}

func (e ackedLogs) Export(ctx context.Context, records []sdklog.Record) error {
	err := e.Exporter.Export(ctx, records)
	if err == nil {
		e.a.n.Add(int64(len(records)))
	}
	return err
}

// ackedSpans exports to the collector last set with to.
type ackedSpans struct {
	exp atomic.Pointer[otlptrace.Exporter]
	a   *acked
}

func (e *ackedSpans) to(t *testing.T, addr string) {
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	e.exp.Store(exp)
}

func (e *ackedSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.exp.Load().ExportSpans(ctx, spans)
	if err == nil {
		e.a.n.Add(int64(len(spans)))
	}
	return err
}

func (e *ackedSpans) Shutdown(ctx context.Context) error { return e.exp.Load().Shutdown(ctx) }

// officialForm sends GenAI calls as the official OTel instrumentations do:
// a span without content, and each message a log record exported in a
// request of its own. Spans and log records may go to different
// collectors.
type officialForm struct {
	// threads spreads the calls over that many threads, load-0 onwards;
	// 0 puts them all in fault-thread.
	threads     int
	lp          *sdklog.LoggerProvider
	tp          *sdktrace.TracerProvider
	spansTo     *ackedSpans
	logs, spans acked
}

func newOfficialForm(t *testing.T, logsTo, spansTo string) *officialForm {
	t.Helper()
	ctx := context.Background()
	f := &officialForm{}
	res := resource.NewSchemaless(attribute.String("service.name", "js-agents"))
	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(logsTo), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	f.spansTo = &ackedSpans{a: &f.spans}
	f.spansTo.to(t, spansTo)
	f.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewSimpleProcessor(ackedLogs{logExp, &f.logs})))
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(f.spansTo))
	t.Cleanup(func() {
		_ = f.lp.Shutdown(ctx)
		_ = f.tp.Shutdown(ctx)
	})
	return f
}

// start begins call i and sends its messages; ending the span sends it.
func (f *officialForm) start(i int) trace.Span {
	thread := "fault-thread"
	if f.threads > 0 {
		thread = fmt.Sprintf("load-%d", i%f.threads)
	}
	ctx, span := f.tp.Tracer("openai-like").Start(context.Background(), "chat gpt-4o-mini", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", "gpt-4o-mini"), attribute.String("gen_ai.conversation.id", thread),
			attribute.Int("convtrace.round", i),
			attribute.Int("gen_ai.usage.input_tokens", 20), attribute.Int("gen_ai.usage.output_tokens", 4)))
	logger := f.lp.Logger("openai-like")
	at := time.Now()
	emit := func(name string, body attribute.Value) {
		var r otellog.Record
		r.SetEventName(name)
		r.SetTimestamp(at) // the same instant: only kind and order tell them apart
		r.SetBody(body)
		logger.Emit(ctx, r)
	}
	emit("gen_ai.system.message", attribute.MapValue(attribute.String("content", "You are terse.")))
	emit("gen_ai.user.message", attribute.MapValue(attribute.String("content", fmt.Sprintf("Question %d?", i))))
	emit("gen_ai.choice", attribute.MapValue(attribute.Int("index", 0), attribute.String("finish_reason", "stop"),
		attribute.Map("message", attribute.String("content", fmt.Sprintf("Answer %d.", i)))))
	return span
}

// checkWhole waits until every call is stored as one prompt and one
// response, whole and in conversation order, and fails on a turn stored
// under two sort keys.
func checkWhole(t *testing.T, conn driver.Conn, calls int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	var whole uint64
	for {
		err := conn.QueryRow(ctx, `
SELECT count()
FROM conversations FINAL
WHERE (role = 'prompt' AND content = concat('[{"role":"system","parts":[{"type":"text","content":"You are terse."}]},{"role":"user","parts":[{"type":"text","content":"Question ', toString(round), '?"}]}]'))
   OR (role = 'response' AND content = concat('Answer ', toString(round), '.') AND tokens_in = 20)`).Scan(&whole)
		if err != nil {
			t.Fatal(err)
		}
		if whole == uint64(2*calls) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var rows, turns uint64
	if err := conn.QueryRow(ctx, "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&rows, &turns); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls: %d whole turns of %d wanted, %d rows of %d turns under FINAL", calls, whole, 2*calls, rows, turns)
	if whole != uint64(2*calls) || turns != uint64(2*calls) || rows != turns {
		t.Errorf("want every call whole once: %d whole turns, %d turns, %d rows; want %d each", whole, turns, rows, 2*calls)
	}
}

// TestJoinAcrossCollectors is fault test (d): two collectors on one
// ClickHouse behind no affinity, each call's log records sent to one and
// its span to the other, eight senders at once.
func TestJoinAcrossCollectors(t *testing.T) {
	conn, dsn := testkit.Open(t)
	a := testkit.Serve(t, nil, "--clickhouse", dsn)
	b := testkit.Serve(t, nil, "--clickhouse", dsn)
	ab, ba := newOfficialForm(t, a.OTLPHTTP, b.OTLPHTTP), newOfficialForm(t, b.OTLPHTTP, a.OTLPHTTP)
	const calls = 200
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < calls; i += 8 {
				f := ab
				if i%2 == 1 {
					f = ba
				}
				f.start(i).End()
			}
		})
	}
	wg.Wait()
	sentLogs, sentSpans := ab.logs.n.Load()+ba.logs.n.Load(), ab.spans.n.Load()+ba.spans.n.Load()
	t.Logf("sent %d calls: %d log records and %d spans acknowledged", calls, sentLogs, sentSpans)
	if sentLogs != 3*calls || sentSpans != calls {
		t.Fatalf("acknowledged %d log records and %d spans, want %d and %d", sentLogs, sentSpans, 3*calls, calls)
	}
	checkWhole(t, conn, calls)
}

// TestJoinCollectorKilled is fault test (c): a collector killed with kill
// -9 after acknowledging the log records of calls whose spans have not
// come; a new collector takes the spans, and every call is whole.
func TestJoinCollectorKilled(t *testing.T) {
	conn, dsn := testkit.Open(t)
	a := testkit.Serve(t, nil, "--clickhouse", dsn)
	f := newOfficialForm(t, a.OTLPHTTP, a.OTLPHTTP)
	const calls = 30
	var open []trace.Span
	for i := range calls {
		open = append(open, f.start(i))
	}
	t.Logf("%d log records acknowledged; killing the collector", f.logs.n.Load())
	a.Kill(t)
	b := testkit.Serve(t, nil, "--clickhouse", dsn)
	f.spansTo.to(t, b.OTLPHTTP)
	for _, span := range open {
		span.End()
	}
	t.Logf("%d spans acknowledged by the new collector", f.spans.n.Load())
	if f.logs.n.Load() != 3*calls || f.spans.n.Load() != calls {
		t.Fatalf("acknowledged %d log records and %d spans, want %d and %d", f.logs.n.Load(), f.spans.n.Load(), 3*calls, calls)
	}
	checkWhole(t, conn, calls)
}
