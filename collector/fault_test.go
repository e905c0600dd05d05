package collector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
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

// spoolChildEnv tells TestSpoolChild what to do: a mode (durable or
// default), a spool folder, a thread and a number of calls.
const spoolChildEnv = "CONVTRACE_SPOOL_CHILD"

// spoolOption is WithDurableSpool in the durable mode, else WithSpool.
func spoolOption(mode, dir string) collector.Option {
	if mode == "durable" {
		return collector.WithDurableSpool(dir)
	}
	return collector.WithSpool(dir)
}

// TestSpoolKilledWhileStorageDown: a process records 2,000 calls while
// ClickHouse is unreachable and is killed with SIGKILL. With
// WithDurableSpool the next process on its spool stores every call, once,
// and its spool empties as it stores; with WithSpool, which holds only what
// left memory (documented), there is nothing to store.
func TestSpoolKilledWhileStorageDown(t *testing.T) {
	conn, dsn := testkit.Open(t)
	const calls = 2000
	for _, tc := range []struct {
		mode string
		want int
	}{{"durable", calls}, {"default", 0}} {
		t.Run(tc.mode, func(t *testing.T) {
			dir, thread := t.TempDir(), "killed-"+tc.mode
			child := testkit.StartTest(t, []string{spoolChildEnv + "=" + strings.Join([]string{tc.mode, dir, thread, strconv.Itoa(calls)}, ",")}, "TestSpoolChild")
			said := fmt.Sprintf("recorded %d calls", calls)
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(child.Output(), said) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !strings.Contains(child.Output(), said) {
				t.Fatalf("child did not record its calls:\n%s", child.Output())
			}
			child.Kill(t)
			segments, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
			t.Logf("child: %s", said+strings.SplitN(strings.SplitN(child.Output(), said, 2)[1], "\n", 2)[0])

			next, err := collector.NewTracerProvider(dsn, spoolOption(tc.mode, dir), collector.WithLogger(discard()))
			if err != nil {
				t.Fatal(err)
			}
			defer next.Shutdown(context.Background())
			deadline = time.Now().Add(30 * time.Second)
			for next.Stats().Written < int64(3*tc.want) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			var turns, unique, prompts, spans uint64
			if err := conn.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id), uniqExactIf(content, role = 'prompt') FROM conversations FINAL WHERE thread_id = ?", thread).Scan(&turns, &unique, &prompts); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRow(context.Background(), "SELECT count() FROM spans FINAL WHERE thread_id = ?", thread).Scan(&spans); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: killed after %d calls leaving %d segments; the next process stored %d turns (%d unique, %d distinct prompts), %d spans; stats %+v",
				tc.mode, calls, len(segments), turns, unique, prompts, spans, next.Stats())
			if turns != uint64(2*tc.want) || unique != turns || prompts != uint64(tc.want) || spans != uint64(tc.want) {
				t.Fatalf("want %d calls stored once", tc.want)
			}

			rec := instrument.NewRecorder(instrument.WithTracerProvider(next))
			for i := range 20 {
				if _, err := rec.Call(context.Background(), instrument.Turn{Model: "gpt-5", Prompt: fmt.Sprintf("up %d", i)}, chat("answer", nil)); err != nil {
					t.Fatal(err)
				}
			}
			if err := next.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Errorf("spool holds %d files once everything was stored, want none", len(left))
			}
		})
	}
}

// TestSpoolChild is the process TestSpoolKilledWhileStorageDown kills: it
// records calls with ClickHouse unreachable, says so, and waits.
func TestSpoolChild(t *testing.T) {
	args := strings.Split(os.Getenv(spoolChildEnv), ",")
	if len(args) != 4 {
		t.Skip("run by TestSpoolKilledWhileStorageDown")
	}
	mode, dir, thread := args[0], args[1], args[2]
	calls, _ := strconv.Atoi(args[3])
	tp, err := collector.NewTracerProvider("clickhouse://"+freeAddr(t)+"/convtrace", spoolOption(mode, dir), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx := instrument.WithThread(context.Background(), thread)
	for i := range calls {
		if _, err := rec.Call(ctx, instrument.Turn{Model: "gpt-5", Prompt: fmt.Sprintf("call %d", i)}, chat("answer", nil)); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("recorded %d calls: %+v\n", calls, tp.Stats())
	time.Sleep(time.Minute)
	t.Fatal("not killed")
}
