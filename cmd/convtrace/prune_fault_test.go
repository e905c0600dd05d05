package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/failpoint"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// threadTotals is what the threads list says of each thread: its turns
// and how many of them were pruned.
func threadTotals(t *testing.T, conn *topology.Conn) map[string][2]uint64 {
	t.Helper()
	var page struct {
		Threads []store.Thread `json:"threads"`
	}
	if err := json.Unmarshal(apiGetBody(t, conn, "/api/threads?limit=200"), &page); err != nil {
		t.Fatalf("threads list: %v", err)
	}
	got := map[string][2]uint64{}
	for _, th := range page.Threads {
		got[th.Project+"/"+th.ID] = [2]uint64{th.Turns, th.PrunedTurns}
	}
	return got
}

// TestPruneKilledAtEveryStep kills a real convtrace prune of one of two
// projects sharing their months with SIGKILL at each step boundary, runs it
// again, and checks that the threads list still counts every thread's
// turns once: its total as before the prune, of which the pruned ones are
// those no longer stored; the other project untouched; the cost report as
// FINAL counts.
func TestPruneKilledAtEveryStep(t *testing.T) {
	for _, point := range []string{
		store.FailPruneShells, store.FailDeleteSubmitted, store.FailDeleteSubmitted + "@2",
		store.FailPruneRemoved, store.FailPruneSummarized,
	} {
		t.Run(point, func(t *testing.T) {
			t.Parallel() // each kills its own process on its own database
			conn, dsn := testkit.Open(t)
			start := time.Now().Add(-20 * 24 * time.Hour)
			for _, project := range []string{"synth", "other"} {
				if _, err := synth.Generate(context.Background(), conn, synth.Config{Turns: 1400, Threads: 6, Project: project, IDPrefix: project + "-", Start: start, Days: 10}); err != nil {
					t.Fatal(err)
				}
			}
			before := threadTotals(t, conn)
			args := []string{"prune", "--clickhouse", dsn, "--older-than", "15d", "--project", "synth", "--yes"}
			killed := testkit.Start(t, []string{failpoint.Env + "=" + point}, args...)
			if code := killed.Wait(t, 2*time.Minute); code == 0 {
				t.Fatalf("the run to kill at %s ended: %s", point, killed.Output())
			}
			if p := testkit.Start(t, nil, args...); p.Wait(t, 2*time.Minute) != 0 {
				t.Fatalf("prune again: %s", p.Output())
			}
			stored := map[string]uint64{}
			rows := testkit.Strings(t, conn, "SELECT concat(project, '/', thread_id, ' ', toString(uniqExact(turn_id))) FROM conversations FINAL GROUP BY project, thread_id")
			for _, r := range rows {
				var key string
				var n uint64
				if _, err := fmt.Sscan(r, &key, &n); err != nil {
					t.Fatal(err)
				}
				stored[key] = n
			}
			after := threadTotals(t, conn)
			var pruned uint64
			for key, b := range before {
				a := after[key]
				pruned += a[1]
				if a[0] != b[0] || a[0]-a[1] != stored[key] {
					t.Errorf("%s: listed %d turns, %d pruned, %d stored; want %d turns as before, the stored ones not pruned", key, a[0], a[1], stored[key], b[0])
				}
			}
			if pruned == 0 {
				t.Error("nothing pruned: the check proves nothing")
			}
			var calls uint64
			if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations FINAL WHERE cost_source != ''").Scan(&calls); err != nil {
				t.Fatal(err)
			}
			body := apiGetBody(t, conn, "/api/cost?from="+start.Add(-24*time.Hour).Format("2006-01-02")+"&to="+time.Now().Add(24*time.Hour).Format("2006-01-02"))
			var report struct {
				Totals struct {
					Calls uint64 `json:"calls"`
				} `json:"totals"`
			}
			if err := json.Unmarshal(body, &report); err != nil || report.Totals.Calls != calls {
				t.Errorf("cost report: %d calls (%v), FINAL %d", report.Totals.Calls, err, calls)
			}
		})
	}
}

// apiGetBody answers a GET of the viewer over conn as a local client.
func apiGetBody(t *testing.T, conn *topology.Conn, path string) []byte {
	t.Helper()
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}
