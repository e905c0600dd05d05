package viewer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
	"github.com/convtrace/convtrace/schema"
)

// inline replaces each ? of query with a literal of the matching argument,
// for chDB, which takes no bound parameters. Test fixtures only.
func inline(t *testing.T, query string, args ...any) string {
	t.Helper()
	parts := strings.Split(query, "?")
	if len(parts) != len(args)+1 {
		t.Fatalf("query has %d placeholders, got %d arguments", len(parts)-1, len(args))
	}
	var b strings.Builder
	for i, a := range args {
		b.WriteString(parts[i])
		switch v := a.(type) {
		case string:
			b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'")
		default:
			fmt.Fprint(&b, v)
		}
	}
	b.WriteString(parts[len(args)])
	return b.String()
}

// The integration tests run the viewer's SQL on ClickHouse 18.16; this runs
// the same statements on a modern server (chDB 26.x) and checks that they
// return what the Go code scans: the same columns, types it can scan into,
// NULL sums for unknown values, one row per turn.
func TestQueriesOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caps := chdbcheck.Capabilities(ctx, t)
	var stmts []string
	for _, m := range schema.Migrations() {
		ss, err := m.Statements(caps)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, ss...)
	}
	const cols = "INSERT INTO conversations (turn_id, span_id, thread_id, phase, role, seq, provider, content, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns) VALUES "
	stmts = append(stmts,
		cols+`('a:prompt:0', 'a', 'th1', 'Plan', 'prompt', 0, 'openai', 'first prompt', NULL, NULL, NULL, 'ok', 1000, 0),
		      ('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000),
		      ('b:prompt:0', 'b', 'th1', 'review', 'prompt', 0, 'anthropic', 'second prompt', NULL, NULL, NULL, 'ok', 3000, 0),
		      ('c:prompt:0', 'c', 'th2', '', 'prompt', 0, '', 'no usage', NULL, NULL, NULL, 'ok', 500, 0),
		      ('d:prompt:0', 'd', 'th3', '', 'prompt', 0, '', 'archived', NULL, NULL, NULL, 'ok', 400, 0)`,
		// The same response delivered again, in a part of its own.
		cols+`('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000)`,
		`INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) VALUES ('th2', 'old', 0, 0, 1), ('th2', 'new', 0, 0, 2), ('th3', '', 1, 0, 1)`,
	)
	queries := []string{
		inline(t, selectThreads, uint64(100)),
		inline(t, selectThread, "th1", "th1"),
		inline(t, selectTurns+filterPhases(1)+filterRole+orderTurns, uint64(100), "th1", "th1", "PLAN", "response", uint64(10)),
		inline(t, selectTurns+orderTurns, uint64(100), "th1", "th1", uint64(10)),
	}
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: stmts, Queries: queries})
	if err != nil {
		t.Fatalf("viewer SQL on ClickHouse %s: %v", caps.Version, err)
	}

	// Types the Go side scans into: *uint64, *float64, []string, uint8.
	wantTypes := map[string]string{
		"thread_id": "String", "first_prompt": "String", "last_ns": "UInt64", "turn_count": "UInt64",
		"sum_in": "Nullable(UInt64)", "sum_out": "Nullable(UInt64)", "cost_total": "Nullable(Float64)",
		"meta_title": "String", "meta_archived": "UInt8",
	}
	for _, c := range out.Results[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("threads column %s is %s, want %s", c.Name, c.Type, want)
		}
		if c.Name == "providers" && !strings.HasPrefix(c.Type, "Array(") {
			t.Errorf("threads column providers is %s, want an array", c.Type)
		}
	}
	threads := out.Results[0].Rows
	if len(threads) != 2 {
		t.Fatalf("threads: %v, want th1 and th2 (th3 archived)", threads)
	}
	th1, th2 := threads[0], threads[1]
	if th1["thread_id"] != "th1" || fmt.Sprint(th1["turn_count"]) != "3" || fmt.Sprint(th1["sum_in"]) != "10" ||
		fmt.Sprint(th1["cost_total"]) != "0.5" || th1["first_prompt"] != "first prompt" {
		t.Errorf("th1 = %v, want 3 turns, 10 tokens in, cost 0.5, first prompt", th1)
	}
	if th2["thread_id"] != "th2" || th2["sum_in"] != nil || th2["sum_out"] != nil || th2["cost_total"] != nil || th2["meta_title"] != "new" {
		t.Errorf("th2 = %v, want NULL sums and the newest title", th2)
	}
	if one := out.Results[1].Rows; len(one) != 1 || fmt.Sprint(one[0]["turn_count"]) != "3" {
		t.Errorf("thread th1 = %v, want one row of 3 turns", one)
	}

	if filtered := out.Results[2].Rows; len(filtered) != 1 || filtered[0]["turn_id"] != "a:response:1" {
		t.Errorf("th1 turns, phase PLAN, role response = %v, want a:response:1 once", filtered)
	}
	var ids []string
	for _, r := range out.Results[3].Rows {
		ids = append(ids, fmt.Sprintf("%s running=%v", r["turn_id"], r["running"]))
	}
	want := "b:prompt:0 running=1,a:response:1 running=0,a:prompt:0 running=0" // newest first
	if strings.Join(ids, ",") != want {
		t.Errorf("th1 turns = %q, want %q", ids, want)
	}
	for _, c := range out.Results[3].Columns {
		if c.Name == "running" && c.Type != "UInt8" {
			t.Errorf("turns column running is %s, want UInt8", c.Type)
		}
	}
}

// The thread page's queries (every filter at once, the count, phase
// counts, facets, traces, notes, one turn's content, the note insert) on
// a modern server, with Korean, Japanese and emoji search.
func TestThreadQueriesOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caps := chdbcheck.Capabilities(ctx, t)
	var stmts []string
	for _, m := range schema.Migrations() {
		ss, err := m.Statements(caps)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, ss...)
	}
	const cols = "INSERT INTO conversations (turn_id, trace_id, span_id, thread_id, session_id, phase, speaker, agent, role, seq, tool_name, content, status, start_ns, duration_ns) VALUES "
	stmts = append(stmts,
		cols+`('a:prompt:0', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'prompt', 0, '', '안녕하세요 세계', 'ok', 1000, 0),
		      ('a:response:1', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'response', 1, '', 'こんにちは 🚀 LAUNCH', 'ok', 2000, 1000),
		      ('b:tool_call:0', 't2', 'b', 'th', 's2', 'execute', 'worker', 'sub', 'tool_call', 0, 'grep', 'launch?', 'ok', 3000, 0),
		      ('c:prompt:0', 't2', 'c', 'th', 's2', 'review', 'worker', '', 'prompt', 0, '', 'other', 'ok', 4000, 0)`,
		cols+`('a:response:1', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'response', 1, '', 'こんにちは 🚀 LAUNCH', 'ok', 2000, 1000)`,
		inline(t, insertNote, "th", "a:response:1", uint8(1), "old", uint64(5)),
		inline(t, insertNote, "th", "a:response:1", uint8(1), "메모", uint64(7)),
		inline(t, insertNote, "th", "c:prompt:0", uint8(0), "", uint64(9)),
	)
	f := TurnFilter{Phases: []string{"PLAN", "review"}, Role: "response", Speaker: "플래너", Agent: AgentMain,
		FromNS: 1500, ToNS: 2500, Query: "🚀 launch", Starred: true}
	cond, condArgs := f.conditions("th")
	all, allArgs := TurnFilter{}.conditions("th")
	queries := []string{
		inline(t, selectTurns+cond+orderTurns, append(append([]any{uint64(8), "th", "th"}, condArgs...), uint64(10))...),
		inline(t, countTurns+cond, append([]any{"th"}, condArgs...)...),
		inline(t, selectTurns+all+orderTurns, append(append([]any{uint64(8), "th", "th"}, allArgs...), uint64(2))...),
		inline(t, countTurns+all, "th"),
		inline(t, selectPhaseCounts, "th"),
		inline(t, selectFacets, "th"),
		inline(t, selectTraces, "th"),
		inline(t, selectNotes, "th"),
		inline(t, selectNote, "th", "a:response:1"),
		inline(t, selectContent, "th", "a:response:1"),
		inline(t, selectTurnExists, "th", "b:tool_call:0"),
	}
	for _, tf := range []TurnFilter{{Agent: "sub", Tool: "grep"}, {Query: "세계"}, {Query: "こんにちは"}, {Session: "s2"}} {
		c, a := tf.conditions("th")
		queries = append(queries, inline(t, countTurns+c, append([]any{"th"}, a...)...))
	}
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: stmts, Queries: queries})
	if err != nil {
		t.Fatalf("thread SQL on ClickHouse %s: %v", caps.Version, err)
	}
	r := out.Results
	rowsOf := func(i int, cols ...string) string {
		var rows []string
		for _, row := range r[i].Rows {
			var vals []string
			for _, c := range cols {
				vals = append(vals, fmt.Sprint(row[c]))
			}
			rows = append(rows, strings.Join(vals, " "))
		}
		return strings.Join(rows, ", ")
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"every filter", rowsOf(0, "turn_id", "stored_bytes"), "a:response:1 27"},
		{"every filter, counted", rowsOf(1, "matched"), "1"},
		{"newest 2, 8 bytes of content", rowsOf(2, "turn_id", "content_prefix"), "c:prompt:0 other, b:tool_call:0 launch?"},
		{"all counted once", rowsOf(3, "matched"), "4"},
		{"phase counts", rowsOf(4, "phase_key", "phase_written", "phase_turns"), "plan Plan 2, execute execute 1, review review 1"},
		{"facets", rowsOf(5, "agents", "tools"), "[sub] [grep]"},
		{"traces", rowsOf(6, "trace_id"), "t1, t2"},
		{"notes", rowsOf(7, "turn_id", "note_starred", "note_memo", "note_updated"), "a:response:1 1 메모 7, c:prompt:0 0  9"},
		{"note", rowsOf(8, "note_memo"), "메모"},
		{"content", rowsOf(9, "content"), "こんにちは 🚀 LAUNCH"},
		{"turn exists", rowsOf(10, "copies"), "1"},
		{"sub-agent tool", rowsOf(11, "matched"), "1"},
		{"Korean", rowsOf(12, "matched"), "1"},
		{"Japanese", rowsOf(13, "matched"), "1"},
		{"session", rowsOf(14, "matched"), "2"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	// groupUniqArray's order is unspecified; the Go side sorts.
	if got := rowsOf(5, "sessions"); got != "[s1 s2]" && got != "[s2 s1]" {
		t.Errorf("facets: sessions %q, want s1 and s2", got)
	}
	wantTypes := map[string]string{"stored_bytes": "UInt64", "running": "UInt8", "content_prefix": "String"}
	for _, c := range r[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("turns column %s is %s, want %s", c.Name, c.Type, want)
		}
	}
	for i, want := range map[int]string{1: "UInt64", 7: "UInt8"} {
		for _, c := range r[i].Columns {
			if (c.Name == "matched" || c.Name == "note_starred") && c.Type != want {
				t.Errorf("query %d column %s is %s, want %s", i, c.Name, c.Type, want)
			}
		}
	}
}
