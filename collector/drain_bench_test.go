package collector_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
)

// BenchmarkExporterDrainAfterOutage measures how long the in-process
// exporter takes to store what it kept through a 30 s ClickHouse outage
// (killed, then restarted), with a pipeline making a call every 2 ms
// throughout: drain-s from the restart until every row is written, and the
// rows kept at the end of the outage. One op is one outage.
func BenchmarkExporterDrainAfterOutage(b *testing.B) {
	srv := testkit.OwnClickHouse(b)
	for i := range b.N {
		tp, err := collector.NewTracerProvider(srv.DSN(fmt.Sprintf("drain_%d", i)), collector.WithLogger(discard()))
		if err != nil {
			b.Fatal(err)
		}
		rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
		calls := 0
		call := func() {
			if _, err := rec.Call(instrument.WithThread(context.Background(), "drain"), instrument.Turn{Model: "gpt-5", Prompt: fmt.Sprintf("call %d", calls)}, chat("answer", nil)); err != nil {
				b.Fatal(err)
			}
			calls++
			time.Sleep(2 * time.Millisecond)
		}
		for range 100 {
			call()
		}
		if err := tp.ForceFlush(context.Background()); err != nil {
			b.Fatal(err)
		}
		testkit.Signal(b, srv, syscall.SIGKILL)
		for down := time.Now(); time.Since(down) < 30*time.Second; {
			call()
		}
		kept := tp.Stats().Buffered
		testkit.Restart(b, srv)
		restarted := time.Now()
		want := int64(3 * calls) // a prompt, a response and a span each
		for tp.Stats().Written < want && time.Since(restarted) < 2*time.Minute {
			time.Sleep(10 * time.Millisecond)
		}
		drain := time.Since(restarted)
		if st := tp.Stats(); st.Written < want || st.Lost > 0 {
			b.Fatalf("after the outage: %+v, want %d rows written and none lost", st, want)
		}
		b.ReportMetric(drain.Seconds(), "drain-s")
		b.ReportMetric(float64(kept), "rows-kept")
		b.ReportMetric(float64(calls), "calls")
		_ = tp.Shutdown(context.Background())
	}
}
