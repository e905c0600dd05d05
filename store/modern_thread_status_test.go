package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The list's status, duration and thread attribute columns and filters on
// a modern server (chDB 26.x): a summary's failed and running calls, its
// attributes with the latest value of each name (a copy of a turn read
// once), and the combination with a prune's shell whose attribute is older.
func TestThreadStatusQueriesOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, thread_id, role, seq, status, content, cost_usd, start_ns, duration_ns, heartbeat_ns, attributes.key, attributes.value) VALUES "
	fixtures := []string{
		cols + `('f:prompt:0', 'f', 'failing', 'prompt', 0, 'ok', 'try', NULL, 1000, 0, 0, [], []),
		      ('f:error:1', 'f', 'failing', 'error', 1, 'error', 'boom', 0.5, 61000001000, 61000000000, 0, ['convtrace.thread.task', 'x'], ['T-1', 'y']),
		      ('r:prompt:0', 'r', 'running', 'prompt', 0, 'ok', 'wait', NULL, 2000, 0, 9000, [], []),
		      ('a:response:1', 'a', 'tasked', 'response', 1, 'ok', 'ok', 0.1, 3000, 10, 0, ['convtrace.thread.task', 'convtrace.thread.board', 'convtrace.thread.id'], ['T-2', 'ops', 'tasked']),
		      ('b:response:1', 'b', 'tasked', 'response', 1, 'ok', 'ok', NULL, 4000, 10, 0, ['convtrace.thread.task'], ['T-3'])`,
		// A copy of a response: one call, one value.
		cols + `('f:error:1', 'f', 'failing', 'error', 1, 'error', 'boom', 0.5, 61000001000, 61000000000, 0, ['convtrace.thread.task', 'x'], ['T-1', 'y'])`,
		inlineSummaries(t, "", []string{"failing", "running", "tasked"}, []uint64{3, 1, 2}, []uint64{1, 2, 3}),
		// The shell of a prune of tasked, whose task was T-0 before.
		`INSERT INTO thread_shells (project, thread_id, cutoff_ns, version, done, pruned_ns, turns, first_ns, last_ns, attr_keys, attr_values, attr_ns)
		 VALUES ('', 'tasked', 2500, 1, 1, 5, 2, 500, 600, ['task'], ['T-0'], [600])`,
	}
	d := func(v time.Duration) *time.Duration { return &v }
	usd := func(v float64) *float64 { return &v }
	cases := []struct {
		f    ThreadFilter
		want string
	}{
		{ThreadFilter{}, "failing,running,tasked"},
		{ThreadFilter{Status: StatusFailed}, "failing"},
		{ThreadFilter{Status: StatusRunning}, "running"},       // heard from at 9000, the cutoff 5000
		{ThreadFilter{Status: StatusOK}, "tasked"},             // the shell's call counts as ended
		{ThreadFilter{Status: StatusInterrupted}, ""},          // none silent since the cutoff
		{ThreadFilter{MinCostUSD: usd(0.2)}, "failing"},        // the copy not counted: 0.5, not 1
		{ThreadFilter{MaxCostUSD: usd(0.5)}, "failing,tasked"}, // running's cost is unknown
		{ThreadFilter{MinDuration: d(time.Minute)}, "failing"},
		{ThreadFilter{MaxDuration: d(5 * time.Microsecond)}, "running,tasked"}, // tasked: 500 to 4000
		{ThreadFilter{Attrs: map[string]string{"task": "T-3", "board": "ops"}}, "tasked"},
		{ThreadFilter{Attrs: map[string]string{"task": "T-0"}}, ""},  // the shell's value is older
		{ThreadFilter{Attrs: map[string]string{"id": "tasked"}}, ""}, // the thread id is no attribute
		{ThreadFilter{Query: "t-1"}, "failing"},
		{ThreadFilter{Query: "RUNN"}, "running"},
	}
	var queries []string
	for _, c := range cases {
		c.f.Limit = 10
		q, args := threadsQuery(c.f, 5000)
		queries = append(queries, inline(t, q, args...))
	}
	queries = append(queries, inline(t, threadsOfIDs("IN ?"), sqlLiteral("('failing', 'running', 'tasked')"),
		sqlLiteral("('failing', 'running', 'tasked')"))+" ORDER BY thread_id")
	out := runModern(t, fixtures, queries)

	for i, c := range cases {
		var ids []string
		for _, r := range out.Results[i].Rows {
			ids = append(ids, fmt.Sprint(r["thread_id"]))
		}
		slices.Sort(ids)
		if got := strings.Join(ids, ","); got != c.want {
			t.Errorf("threads %+v = %q, want %q", c.f, got, c.want)
		}
	}
	var got []string
	for _, r := range out.Results[len(cases)].Rows {
		got = append(got, fmt.Sprintf("%v first=%v failed=%v open=%v alive=%v attrs=%v=%v", r["thread_id"], r["thread_first_ns"],
			r["failed_total"], r["open_total"], r["thread_alive_ns"], r["thread_attr_keys"], r["thread_attr_values"]))
	}
	want := []string{
		"failing first=1000 failed=1 open=0 alive=61000001000 attrs=[task]=[T-1]",
		"running first=2000 failed=0 open=1 alive=9000 attrs=[]=[]",
		"tasked first=500 failed=0 open=0 alive=4000 attrs=[task board]=[T-3 ops]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("threads:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
