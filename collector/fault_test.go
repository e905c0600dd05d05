package collector_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema/ddl"
)

// TestExporterThroughOutage is fault test (e): ClickHouse is killed with
// SIGKILL for 10 s while a pipeline makes 1,000 calls through the
// in-process exporter, then restarted. Every call's turns arrive once, and
// calls take as long as before (figures logged, not asserted).
func TestExporterThroughOutage(t *testing.T) {
	srv := testkit.OwnClickHouse(t)
	dsn := srv.DSN("fault_e")
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("fault-e"), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	var ids []string
	calls := func(n int, every time.Duration) []time.Duration {
		lat := make([]time.Duration, 0, n)
		for i := range n {
			start := time.Now()
			resp, err := rec.Call(instrument.WithThread(context.Background(), "outage"), instrument.Turn{Model: "gpt-5", Prompt: fmt.Sprintf("call %d", len(ids))}, chat("answer", nil))
			lat = append(lat, time.Since(start))
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			ids = append(ids, resp.TurnID)
			time.Sleep(every)
		}
		return lat
	}
	before := calls(500, 10*time.Millisecond) // paced as during the outage, for a fair comparison
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	testkit.Signal(t, srv, syscall.SIGKILL)
	outageStart := time.Now()
	during := calls(1000, 10*time.Millisecond) // about 10 s of calls
	atEnd := tp.Stats()
	testkit.Restart(t, srv)
	t.Logf("ClickHouse down %s; stats at the end of the outage %+v", time.Since(outageStart).Round(time.Millisecond), atEnd)

	drainStart := time.Now()
	want := int64(len(ids) * 3) // a prompt, a response and a span each
	for tp.Stats().Written < want && time.Since(drainStart) < 30*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	st := tp.Stats()
	t.Logf("drained in %s: %+v", time.Since(drainStart).Round(time.Millisecond), st)

	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var final, unique, raw, spans uint64
	if err := conn.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&final, &unique); err != nil {
		t.Fatal(err)
	}
	_ = conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&raw)
	_ = conn.QueryRow(context.Background(), "SELECT count() FROM spans FINAL").Scan(&spans)
	found := map[string]bool{}
	rows, err := conn.Query(context.Background(), "SELECT turn_id FROM conversations WHERE role = 'response'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		found[id] = true
	}
	rows.Close()
	missing := 0
	for _, id := range ids {
		if !found[id] {
			missing++
		}
	}
	t.Logf("sent %d calls (acknowledged: all, ExportSpans never fails); found %d turns under FINAL (%d unique, %d raw), %d spans; %d calls missing",
		len(ids), final, unique, raw, spans, missing)
	t.Logf("call latency before: median %s p99 %s; during the outage: median %s p99 %s",
		pct(before, 50), pct(before, 99), pct(during, 50), pct(during, 99))
	if missing != 0 || final != unique || final != uint64(2*len(ids)) || spans != uint64(len(ids)) || st.Lost != 0 {
		t.Errorf("want every call's 2 turns and span stored once, none lost")
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
