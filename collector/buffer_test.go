package collector_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
)

// TestBufferFullLosesOldestWithOneWarning keeps rows while storage is down
// up to the buffer's bytes, then drops the oldest: counted, and said in one
// warning, not one line per batch.
func TestBufferFullLosesOldestWithOneWarning(t *testing.T) {
	var logs testkit.Buffer
	tp, err := collector.NewTracerProvider("clickhouse://"+freeAddr(t)+"/convtrace",
		collector.WithBufferSize(64<<10), collector.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for range 200 {
		_, _ = rec.Call(context.Background(), instrument.Turn{Prompt: strings.Repeat("p", 1000)}, chat("a", nil))
		_ = tp.ForceFlush(context.Background()) // one failed batch each
	}
	st := tp.Stats()
	t.Logf("stats %+v\nlog:\n%s", st, logs.String())
	if st.Lost == 0 || st.BufferedBytes > 64<<10 || st.Lost+st.Buffered != 600 {
		t.Errorf("want the oldest of 600 rows lost, the rest buffered under 64 KiB")
	}
	if n := strings.Count(logs.String(), "rows lost"); n != 1 {
		t.Errorf("%d loss warnings, want 1", n)
	}
	_ = tp.Shutdown(context.Background())
}

// TestSpoolReplayedByTheNextExporter: a pipeline that ends while storage is
// down spools its rows; the next exporter on the same folder stores them,
// once, and removes the spool.
func TestSpoolReplayedByTheNextExporter(t *testing.T) {
	conn, dsn := testkit.Open(t)
	dir := t.TempDir()
	down, err := collector.NewTracerProvider("clickhouse://"+freeAddr(t)+"/convtrace", collector.WithSpool(dir),
		collector.WithBufferSize(16<<10), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(down))
	var ids []string
	for i := range 50 {
		resp, err := rec.Call(instrument.WithThread(context.Background(), "spooled"), instrument.Turn{Model: "gpt-5", Prompt: strings.Repeat("q", i*100)}, chat("a", nil))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.TurnID)
		_ = down.ForceFlush(context.Background())
	}
	if err := down.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := down.Stats()
	segments, _ := filepath.Glob(filepath.Join(dir, "*"))
	t.Logf("sent 50 calls (150 rows) with storage down: %+v; spool %q", st, segments)
	if st.Spooled != 150 || st.Lost != 0 || len(segments) == 0 {
		t.Fatalf("want all 150 rows spooled")
	}

	up, err := collector.NewTracerProvider(dsn, collector.WithSpool(dir), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for up.Stats().Written < 150 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := up.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var turns, unique, spans, priced uint64
	if err := conn.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id), countIf(cost_source != '') FROM conversations FINAL WHERE thread_id = 'spooled'").Scan(&turns, &unique, &priced); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM spans FINAL").Scan(&spans); err != nil {
		t.Fatal(err)
	}
	var missing int
	for _, id := range ids {
		var n uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations WHERE turn_id = ?", id).Scan(&n); err != nil || n == 0 {
			missing++
		}
	}
	left, _ := os.ReadDir(dir)
	t.Logf("replayed: %+v; found %d turns (%d unique), %d spans, %d missing; %d files left", up.Stats(), turns, unique, spans, missing, len(left))
	if turns != 100 || unique != 100 || spans != 50 || missing != 0 || priced != 50 || len(left) != 0 {
		t.Errorf("want 100 turns once, 50 spans, every call's response, 50 priced responses, the spool removed")
	}
}

// TestDurableSpoolUnwritable: a durable spool whose folder cannot be made
// (a file is in its way) says so, and the rows stay in memory as with
// WithSpool: with ClickHouse up every call is stored.
func TestDurableSpoolUnwritable(t *testing.T) {
	conn, dsn := testkit.Open(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	tp, err := collector.NewTracerProvider(dsn, collector.WithDurableSpool(filepath.Join(blocker, "spool")),
		collector.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for i := range 10 {
		if _, err := rec.Call(instrument.WithThread(context.Background(), "unjournaled"), instrument.Turn{Model: "gpt-5", Prompt: fmt.Sprint(i)}, chat("a", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var turns uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations FINAL WHERE thread_id = 'unjournaled'").Scan(&turns); err != nil {
		t.Fatal(err)
	}
	st := tp.Stats()
	t.Logf("stored %d turns; stats %+v\nlog:\n%s", turns, st, logs.String())
	if turns != 20 || st.Written != 30 || st.Lost != 0 || strings.Count(logs.String(), "rows not journaled") != 1 {
		t.Errorf("want 10 calls stored, nothing lost, one warning")
	}
}
