package viewer_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/synth"
)

// tablesOfThread are the tables a thread's rows are in.
var tablesOfThread = []string{"conversations", "spans", "messages", "turn_notes", "thread_meta", "thread_summary", "cost_thread_daily"}

// rowsOfThread counts the rows of thread id in each of tablesOfThread.
func rowsOfThread(t *testing.T, conn driver.Conn, id string) map[string]uint64 {
	t.Helper()
	n := map[string]uint64{}
	for _, table := range tablesOfThread {
		var c uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM "+table+" WHERE thread_id = ?", id).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n[table] = c
	}
	return n
}

// Deleting a thread removes its rows from every table and it from every
// answer; the other threads and the cost report stay exact.
func TestDeleteThread(t *testing.T) {
	h, conn, id := demoServer(t)
	ctx := context.Background()
	testkit.InsertTurns(t, conn, costFixture()...)
	now := time.Now()
	from, to := time.Unix(0, int64(at(0))).Add(-24*time.Hour), now.Add(24*time.Hour)

	// Everything the thread can hold, and the summaries warm.
	var turnID string
	if err := conn.QueryRow(ctx, "SELECT turn_id FROM conversations WHERE thread_id = ? LIMIT 1", id).Scan(&turnID); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/api/threads/" + id + "/turns/" + turnID + "/note", `{"starred": true, "memo": "keep?"}`},
		{"PATCH", "/api/threads/" + id, `{"title": "to delete"}`},
	} {
		if res := send(t, h, w.method, w.path, "application/json", w.body); res.status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", w.method, w.path, res.status, res.body)
		}
	}
	reportFacts(t, h, from, to, "")
	var list struct{ Threads []store.Thread }
	getJSON(t, h, "/api/threads", http.StatusOK, &list)
	before := rowsOfThread(t, conn, id)
	for _, table := range []string{"conversations", "spans", "messages", "turn_notes", "thread_meta", "thread_summary"} {
		if before[table] == 0 {
			t.Fatalf("the demo thread has no row in %s before the deletion: the test would test nothing (%v)", table, before)
		}
	}
	var turns uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(turn_id) FROM conversations WHERE thread_id = ?", id).Scan(&turns); err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		path, body string
		status     int
	}{
		{"/api/threads/" + id, `{}`, http.StatusBadRequest},
		{"/api/threads/" + id, `{"confirm": "th-a"}`, http.StatusBadRequest},
		{"/api/threads/nobody", `{"confirm": "nobody"}`, http.StatusNotFound},
	}
	for _, r := range refused {
		if res := send(t, h, "DELETE", r.path, "application/json", r.body); res.status != r.status {
			t.Errorf("DELETE %s %s: %d %s, want %d", r.path, r.body, res.status, res.body, r.status)
		}
	}
	if n := rowsOfThread(t, conn, id); n["conversations"] != before["conversations"] {
		t.Fatalf("a refused deletion removed rows: %v, before %v", n, before)
	}

	res := send(t, h, "DELETE", "/api/threads/"+id, "application/json", `{"confirm": "`+id+`"}`)
	if res.status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", res.status, res.body)
	}
	var out struct{ Removed store.Removal }
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Removed.Turns != turns || out.Removed.Spans == 0 || out.Removed.Notes != 1 {
		t.Errorf("removed %+v, want %d turns, its spans and 1 note", out.Removed, turns)
	}
	for table, n := range rowsOfThread(t, conn, id) {
		if n != 0 {
			t.Errorf("%s still holds %d rows of the deleted thread", table, n)
		}
	}
	if res := get(t, h, "/api/threads/"+id); res.status != http.StatusNotFound {
		t.Errorf("GET the deleted thread: %d, want 404", res.status)
	}
	var after struct{ Threads []store.Thread }
	getJSON(t, h, "/api/threads", http.StatusOK, &after)
	if len(after.Threads) != len(list.Threads)-1 {
		t.Errorf("threads listed after: %d, want %d", len(after.Threads), len(list.Threads)-1)
	}
	for _, th := range after.Threads {
		if th.ID == id {
			t.Errorf("the deleted thread is still listed: %+v", th)
		}
	}
	if d := finalFacts(t, conn, from, to, "").diff(reportFacts(t, h, from, to, "")); d != "" {
		t.Errorf("cost report after the deletion:\n%s", d)
	}
}

// threadCounts is, per thread id, how many distinct turns it has, in
// total and before a cutoff (of project, when not empty), summed over its
// projects as the threads list sums them; and how many (project, thread)
// have every turn before the cutoff.
func threadCounts(t *testing.T, conn driver.Conn, cutoff uint64, project string) (map[string][2]uint64, int) {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
SELECT thread_id, uniqExact(turn_id), uniqExactIf(turn_id, start_ns < ? AND (? = '' OR project = ?))
FROM conversations
GROUP BY project, thread_id`, cutoff, project, project)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	counts, whole := map[string][2]uint64{}, 0
	for rows.Next() {
		var id string
		var all, old uint64
		if err := rows.Scan(&id, &all, &old); err != nil {
			t.Fatal(err)
		}
		c := counts[id]
		counts[id] = [2]uint64{c[0] + all, c[1] + old}
		if old == all {
			whole++
		}
	}
	return counts, whole
}

// A prune removes exactly the turns before its cutoff, keeps every
// thread's shell with its counts before pruning, takes the notes of the
// removed turns with them, and leaves the cost report exact. An
// interrupted prune is finished by the next one and counted once.
func TestPruneKeepsShellsAndExactSummaries(t *testing.T) {
	h, conn := costServer(t)
	ctx := context.Background()
	day0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, cfg := range []synth.Config{
		{Turns: 4_000, Threads: 40, Project: "alpha", Start: day0, Days: 75},
		{Turns: 1_500, Threads: 10, Project: "beta", Start: day0.AddDate(0, 1, 19), Days: 20},
	} {
		if _, err := synth.Generate(ctx, conn, cfg); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var oldTurn, newTurn [2]string
	for i, cond := range []string{"start_ns < ?", "start_ns >= ?"} {
		err := conn.QueryRow(ctx, "SELECT thread_id, turn_id FROM conversations WHERE project = 'alpha' AND "+cond+" ORDER BY turn_id LIMIT 1",
			uint64(cutoff.UnixNano())).Scan(&[]*[2]string{&oldTurn, &newTurn}[i][0], &[]*[2]string{&oldTurn, &newTurn}[i][1])
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range [][2]string{oldTurn, newTurn} {
		if err := conn.Exec(ctx, "INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns) SELECT ?, ?, 1, 'note', 1", n[0], n[1]); err != nil {
			t.Fatal(err)
		}
	}
	from, to := day0.AddDate(0, 0, -1), day0.AddDate(0, 4, 0)
	reportFacts(t, h, from, to, "") // the cost summaries warm
	st := store.New(conn, 1000, time.Minute)
	list := func() map[string]store.Thread {
		t.Helper()
		page, err := st.Threads(ctx, store.ThreadFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]store.Thread{}
		for _, th := range page.Threads {
			m[th.ID] = th
		}
		return m
	}
	listed := list()
	first, whole := threadCounts(t, conn, uint64(cutoff.UnixNano()), "")
	partial := 0
	for _, c := range first {
		if c[1] > 0 && c[1] < c[0] {
			partial++
		}
	}
	if whole == 0 || partial == 0 {
		t.Fatalf("the data has %d threads wholly before the cutoff and %d partly: want some of each", whole, partial)
	}

	// check compares the list with the counts before any prune (totals)
	// and the turns removed so far (pruned).
	check := func(step string, pruned map[string]uint64) {
		t.Helper()
		got := list()
		if len(got) != len(listed) {
			t.Errorf("%s: %d threads listed, want the %d listed before", step, len(got), len(listed))
		}
		for id, c := range first {
			th, ok := got[id]
			switch {
			case !ok:
				t.Errorf("%s: thread %s is no longer listed", step, id)
			case th.Turns != c[0] || th.PrunedTurns != pruned[id] || (th.PrunedAt != nil) != (pruned[id] > 0):
				t.Errorf("%s: thread %s lists %d turns, %d pruned (at %v); want %d, %d pruned", step, id, th.Turns, th.PrunedTurns, th.PrunedAt, c[0], pruned[id])
			}
		}
		if d := finalFacts(t, conn, from, to, "").diff(reportFacts(t, h, from, to, "")); d != "" {
			t.Errorf("%s: cost report:\n%s", step, d)
		}
	}

	scope := store.PruneScope{BeforeNS: uint64(cutoff.UnixNano())}
	plan, err := st.PlanPrune(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Partitions) != 2 || plan.WholeThreads != uint64(whole) {
		t.Errorf("plan %+v: want March and April dropped whole and %d threads left empty", plan, whole)
	}
	if _, err := st.Prune(ctx, scope, nil); err != nil {
		t.Fatal(err)
	}
	var left uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM conversations WHERE start_ns < ?", scope.BeforeNS).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d turns before the cutoff remain", left)
	}
	pruned := map[string]uint64{}
	for id, c := range first {
		pruned[id] = c[1]
	}
	check("after the prune", pruned)
	notes := testkit.Strings(t, conn, "SELECT turn_id FROM turn_notes")
	if strings.Join(notes, ",") != newTurn[1] {
		t.Errorf("notes after the prune: %v, want only that of the kept turn %s", notes, newTurn[1])
	}
	if res := get(t, h, "/threads/"+synth.Thread10); res.status != http.StatusOK || !strings.Contains(res.body, "turns pruned") {
		t.Errorf("page of a pruned thread: %d, marked pruned: %v", res.status, strings.Contains(res.body, "turns pruned"))
	}
	if again, err := st.Prune(ctx, scope, nil); err != nil || again.Turns != 0 {
		t.Errorf("the same prune again: %+v, %v; want nothing to remove", again, err)
	}
	check("after the same prune again", pruned)

	// A prune of beta cut short once its shells are stored; the next prune
	// finishes it before its own.
	beta := store.PruneScope{BeforeNS: uint64(cutoff.AddDate(0, 0, 5).UnixNano()), Project: "beta"}
	second, _ := threadCounts(t, conn, beta.BeforeNS, "beta")
	short, cancel := context.WithCancel(ctx)
	_, err = st.Prune(short, beta, func(step string) {
		if strings.HasPrefix(step, "kept the shells") {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the prune cut short: %v, want context.Canceled", err)
	}
	later := store.PruneScope{BeforeNS: uint64(cutoff.AddDate(0, 0, 3).UnixNano()), Project: "beta"}
	if p, err := st.PlanPrune(ctx, later); err != nil || p.Unfinished == 0 {
		t.Fatalf("plan after the interruption: %+v, %v; want the unfinished prune named", p, err)
	}
	if _, err := st.Prune(ctx, later, nil); err != nil {
		t.Fatal(err)
	}
	for id, c := range second {
		pruned[id] += c[1]
	}
	check("after the interrupted prune was finished", pruned)
	if err := conn.QueryRow(ctx, "SELECT count() FROM conversations WHERE project = 'beta' AND start_ns < ?", beta.BeforeNS).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d beta turns before the interrupted prune's cutoff remain", left)
	}
}
