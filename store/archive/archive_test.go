package archive_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/archive"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/viewer"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// answers reads what the viewer answers about each thread of project: its
// turns, its markdown and its cost.
func answers(t *testing.T, h http.Handler, ids []string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, id := range ids {
		for _, path := range []string{"/api/threads/" + id + "/turns?limit=1000", "/api/threads/" + id + "/markdown", "/api/threads/" + id + "/cost"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = "127.0.0.1:8080"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got[path] = rec.Result().Status + "\n" + rec.Body.String()
		}
	}
	return got
}

func count(t *testing.T, conn driver.Conn, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Archiving writes each idle thread of a project to its own checked file
// and removes it; the other project stays, the cost report counts what is
// left, and importing the files brings every answer back. A run cut short,
// and a file damaged since, are mended by the next run: nothing lost,
// nothing doubled.
func TestArchiveRoundTrip(t *testing.T) {
	ctx := context.Background()
	conn, dsn := testkit.Open(t)
	if p := testkit.Start(t, nil, "demo", "--clickhouse", dsn); p.Wait(t, 2*time.Minute) != 0 {
		t.Fatalf("convtrace demo: %s", p.Output())
	}
	if _, err := synth.Generate(ctx, conn, synth.Config{Turns: 1400, Threads: 6, Project: "old",
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Days: 10}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns) SELECT thread_id, turn_id, 1, 'kept', 1 FROM conversations WHERE project = 'old' LIMIT 3"); err != nil {
		t.Fatal(err)
	}
	ids := testkit.Strings(t, conn, "SELECT DISTINCT thread_id FROM conversations WHERE project = 'old' ORDER BY thread_id")
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	before := answers(t, h, ids)
	demoTurns := count(t, conn, "SELECT count() FROM conversations WHERE project != 'old'")

	dir := t.TempDir()
	cutoff := time.Now().Add(time.Minute)
	res, err := archive.Run(ctx, conn, dir, cutoff, "old", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Threads != len(ids) || len(res.Files) != len(ids) || res.Counts.Notes != 3 {
		t.Errorf("archived %+v, want the %d threads of project old and their 3 notes", res, len(ids))
	}
	for _, id := range ids {
		path := archive.Path(dir, "old", id)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("thread %s: %v", id, err)
		}
	}
	if n := count(t, conn, "SELECT count() FROM conversations WHERE project = 'old'"); n != 0 {
		t.Errorf("%d turns of project old left after archiving", n)
	}
	if n := count(t, conn, "SELECT count() FROM turn_notes"); n != 0 {
		t.Errorf("%d notes left after archiving", n)
	}
	if n := count(t, conn, "SELECT count() FROM conversations WHERE project != 'old'"); n != demoTurns {
		t.Errorf("%d turns of the demo after archiving, want %d", n, demoTurns)
	}
	// The cost report counts each call left once, as FINAL would.
	var report struct {
		Totals struct {
			Calls uint64 `json:"calls"`
		} `json:"totals"`
	}
	req := httptest.NewRequest(http.MethodGet, "/api/cost?from=2025-12-01&to="+time.Now().Add(24*time.Hour).Format("2006-01-02"), nil)
	req.Host = "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := json.NewDecoder(rec.Body).Decode(&report); err != nil {
		t.Fatalf("cost report: %v: %s", err, rec.Body)
	}
	if want := count(t, conn, "SELECT count() FROM conversations FINAL WHERE cost_source != ''"); report.Totals.Calls != want || want == 0 {
		t.Errorf("cost report after archiving: %d calls, want %d", report.Totals.Calls, want)
	}
	if again, err := archive.Run(ctx, conn, dir, cutoff, "old", nil); err != nil || again.Threads != 0 {
		t.Errorf("archiving again: %+v, %v; want nothing to do", again, err)
	}

	restore := func() {
		t.Helper()
		for _, f := range res.Files {
			p := testkit.Start(t, nil, "import", "--clickhouse", dsn, f)
			if code := p.Wait(t, time.Minute); code != 0 {
				t.Fatalf("convtrace import %s: exit %d: %s", f, code, p.Output())
			}
		}
	}
	restore()
	if d := diff(before, answers(t, h, ids)); d != "" {
		t.Fatalf("after archive and import:\n%s", d)
	}

	// Cut short after one thread; one file written by the first run is
	// damaged since. The next run mends both, the damaged file kept
	// beside the new one.
	short, cancel := context.WithCancel(ctx)
	_, err = archive.Run(short, conn, dir, cutoff, "old", func(done, total int) { cancel() })
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("archive cut short: %v, want context.Canceled", err)
	}
	damaged := res.Files[len(res.Files)-1]
	if err := os.Truncate(damaged, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Run(ctx, conn, dir, cutoff, "old", nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT count() FROM conversations WHERE project = 'old'"); n != 0 {
		t.Errorf("%d turns of project old left after the second archive", n)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "*"+archive.Ext))
	if len(matches) != len(ids) {
		t.Errorf("files in the archive: %v, want one per thread", matches)
	}
	if aside, _ := filepath.Glob(damaged + ".damaged-*"); len(aside) != 1 {
		t.Errorf("the damaged file set aside: %v, want it kept once", aside)
	}
	restore()
	if d := diff(before, answers(t, h, ids)); d != "" {
		t.Errorf("after the mended archive and import:\n%s", d)
	}
}

func diff(want, got map[string]string) string {
	var b strings.Builder
	for path, w := range want {
		if g := got[path]; g != w {
			b.WriteString(path + ":\n got " + cut(g) + "\nwant " + cut(w) + "\n")
		}
	}
	return b.String()
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
