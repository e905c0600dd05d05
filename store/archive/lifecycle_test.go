package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/archive"
	"github.com/convtrace/convtrace/store/failpoint"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// oldThreads writes a project "old" of threads months old, and returns
// their ids and how many turns they hold.
func oldThreads(t *testing.T, conn driver.Conn) ([]string, uint64) {
	t.Helper()
	if _, err := synth.Generate(context.Background(), conn, synth.Config{Turns: 1400, Threads: 6, Project: "old",
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Days: 10}); err != nil {
		t.Fatal(err)
	}
	ids := testkit.Strings(t, conn, "SELECT DISTINCT thread_id FROM conversations WHERE project = 'old' ORDER BY thread_id")
	return ids, count(t, conn, "SELECT uniqExact(turn_id) FROM conversations WHERE project = 'old'")
}

// listed returns the threads list's rows of threads in ids, by id: what
// the viewer shows of them.
func listed(t *testing.T, conn *topology.Conn, ids []string) map[string]store.Thread {
	t.Helper()
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	req := httptest.NewRequest(http.MethodGet, "/api/threads?limit=200", nil)
	req.Host = "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var page struct {
		Threads []store.Thread `json:"threads"`
	}
	if err := json.NewDecoder(rec.Body).Decode(&page); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("threads list: %d, %v", rec.Code, err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	got := map[string]store.Thread{}
	for _, th := range page.Threads {
		if want[th.ID] {
			got[th.ID] = th
		}
	}
	return got
}

// restored imports every archive file under dir into a fresh database and
// returns it.
func restored(t *testing.T, dir string) *topology.Conn {
	t.Helper()
	conn, dsn := testkit.Open(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"+archive.Ext))
	if p := testkit.Start(t, nil, append([]string{"import", "--clickhouse", dsn}, files...)...); p.Wait(t, time.Minute) != 0 {
		t.Fatalf("convtrace import %v: %s", files, p.Output())
	}
	return conn
}

// TestArchiveKilledAtEveryStep kills a real convtrace archive with
// SIGKILL at each step boundary of its first thread, runs it again to the
// end, and checks that nothing is lost, doubled or left behind: no turn of
// the project in the database, no ghost in the threads list, the cost
// report as FINAL counts, no temporary file or journal left, and every
// turn restorable from the files, once.
func TestArchiveKilledAtEveryStep(t *testing.T) {
	for _, point := range []string{
		archive.FailWritten, archive.FailPlaced, archive.FailJournaled,
		store.FailDeleteSubmitted, store.FailDeleteSubmitted + "@3", store.FailThreadRowsDeleted,
		archive.FailRemoved,
	} {
		t.Run(point, func(t *testing.T) {
			t.Parallel() // each kills its own process on its own database
			conn, dsn := testkit.Open(t)
			ids, turns := oldThreads(t, conn)
			dir := t.TempDir()
			args := []string{"archive", "--clickhouse", dsn, "--to", dir, "--older-than", "30d", "--project", "old"}
			killed := testkit.Start(t, []string{failpoint.Env + "=" + point}, args...)
			if code := killed.Wait(t, 2*time.Minute); code == 0 {
				t.Fatalf("the run to kill at %s ended: %s", point, killed.Output())
			}
			if p := testkit.Start(t, nil, args...); p.Wait(t, 2*time.Minute) != 0 {
				t.Fatalf("archive again: %s", p.Output())
			}
			if n := count(t, conn, "SELECT count() FROM conversations WHERE project = 'old'"); n != 0 {
				t.Errorf("%d turns of project old left", n)
			}
			if l := listed(t, conn, ids); len(l) != 0 {
				t.Errorf("archived threads still listed: %v", l)
			}
			if n := count(t, conn, "SELECT count() FROM thread_summary WHERE project = 'old'"); n != 0 {
				t.Errorf("%d summaries of archived threads left", n)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*", ".archive-*"))
			if _, err := os.Stat(filepath.Join(dir, ".journal")); err == nil || len(left) > 0 {
				t.Errorf("left behind: journal %v, temporary files %v", err == nil, left)
			}
			back := restored(t, dir)
			var n, unique uint64
			if err := back.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&n, &unique); err != nil {
				t.Fatal(err)
			}
			if n != turns || unique != turns {
				t.Errorf("restored %d rows of %d turns, want the %d archived", n, unique, turns)
			}
		})
	}
}

// TestArchiveAgainKeepsEveryTurn archives a thread, lets it go on under
// the same id, and archives it again: the file then holds its first turns
// and its new ones, and restoring it brings back every one.
func TestArchiveAgainKeepsEveryTurn(t *testing.T) {
	ctx := context.Background()
	conn, dsn := testkit.Open(t)
	ids, _ := oldThreads(t, conn)
	id := ids[0]
	first := count(t, conn, "SELECT uniqExact(turn_id) FROM conversations WHERE thread_id = ?", id)
	dir := t.TempDir()
	if _, err := archive.Run(ctx, conn, dir, time.Now().Add(time.Minute), "old", nil); err != nil {
		t.Fatal(err)
	}

	// The thread goes on: three calls, six turns.
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("old"))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for i := range 3 {
		if _, err := rec.Call(instrument.WithThread(ctx, id), instrument.Turn{Prompt: fmt.Sprintf("go on %d", i)}, func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "more"}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Run(ctx, conn, dir, time.Now().Add(time.Minute), "old", nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT count() FROM conversations WHERE thread_id = ?", id); n != 0 {
		t.Errorf("%d turns of the thread left", n)
	}
	back := restored(t, dir)
	if n := count(t, back, "SELECT uniqExact(turn_id) FROM conversations WHERE thread_id = ?", id); n != first+6 {
		t.Errorf("the thread restored with %d turns, want its first %d and the 6 after", n, first)
	}
	if n := count(t, back, "SELECT count() FROM conversations FINAL WHERE thread_id = ?", id); n != first+6 {
		t.Errorf("%d rows FINAL of the restored thread, want %d", n, first+6)
	}
}
