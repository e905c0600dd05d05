package viewer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
)

// sqlLiteral is SQL that inline writes as it is: how clickhouse-go binds
// an array or a GroupSet tuple.
type sqlLiteral string

func (l sqlLiteral) String() string { return string(l) }

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
	caps, stmts := chdbcheck.Schema(ctx, t)
	const cols = "INSERT INTO conversations (turn_id, span_id, thread_id, phase, role, seq, provider, content, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns) VALUES "
	stmts = append(stmts,
		cols+`('a:prompt:0', 'a', 'th1', 'Plan', 'prompt', 0, 'openai', 'first prompt', NULL, NULL, NULL, 'ok', 1000, 0),
		      ('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000),
		      ('b:prompt:0', 'b', 'th1', 'review', 'prompt', 0, 'anthropic', 'second prompt', NULL, NULL, NULL, 'ok', 3000, 0),
		      ('c:prompt:0', 'c', 'th2', '', 'prompt', 0, '', 'no usage', NULL, NULL, NULL, 'ok', 500, 0),
		      ('d:prompt:0', 'd', 'th3', '', 'prompt', 0, '', 'archived', NULL, NULL, NULL, 'ok', 400, 0)`,
		// The same response delivered again, in a part of its own.
		cols+`('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000)`,
	)
	queries := []string{
		inline(t, selectTurns+filterPhases(1)+filterRole+orderTurns, uint64(100), "th1", "th1", "PLAN", "response", uint64(10)),
		inline(t, selectTurns+orderTurns, uint64(100), "th1", "th1", uint64(10)),
	}
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: stmts, Queries: queries})
	if err != nil {
		t.Fatalf("viewer SQL on ClickHouse %s: %v", caps.Version, err)
	}

	if filtered := out.Results[0].Rows; len(filtered) != 1 || filtered[0]["turn_id"] != "a:response:1" {
		t.Errorf("th1 turns, phase PLAN, role response = %v, want a:response:1 once", filtered)
	}
	var ids []string
	for _, r := range out.Results[1].Rows {
		ids = append(ids, fmt.Sprintf("%s running=%v", r["turn_id"], r["running"]))
	}
	want := "b:prompt:0 running=1,a:response:1 running=0,a:prompt:0 running=0" // newest first
	if strings.Join(ids, ",") != want {
		t.Errorf("th1 turns = %q, want %q", ids, want)
	}
	for _, c := range out.Results[1].Columns {
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
	caps, stmts := chdbcheck.Schema(ctx, t)
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
