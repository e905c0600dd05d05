package store

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
			b.WriteString(quoteString(v))
		default:
			fmt.Fprint(&b, v)
		}
	}
	b.WriteString(parts[len(args)])
	return b.String()
}

// inlineSQL is inline of q's text and arguments (sqlArgs).
func inlineSQL(t *testing.T, q sqlText) string {
	t.Helper()
	return inline(t, q.text, sqlArgs(q.args)...)
}

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// quoteString is s as a ClickHouse string literal, as clickhouse-go
// quotes a bound string.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// sqlArray renders a bound array argument as clickhouse-go does.
func sqlArray[T string | uint32 | uint64](xs []T) sqlLiteral {
	parts := make([]string, len(xs))
	for i, x := range xs {
		if s, ok := any(x).(string); ok {
			parts[i] = quoteString(s)
		} else {
			parts[i] = fmt.Sprint(x)
		}
	}
	return sqlLiteral("[" + strings.Join(parts, ", ") + "]")
}

// runModern runs fixtures, after the schema's statements, and then queries
// on a modern server (chDB 26.x), failing t when any of them fails.
func runModern(t *testing.T, fixtures, queries []string) chdbcheck.Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caps, stmts := chdbcheck.Schema(ctx, t)
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: append(stmts, fixtures...), Queries: queries})
	if err != nil {
		t.Fatalf("viewer SQL on ClickHouse %s: %v", caps.Version, err)
	}
	return out
}

// The thread page's queries (every filter at once, the count, phase
// counts, facets, traces, notes, one turn's content, the note insert) on
// a modern server, with Korean, Japanese and emoji search: the columns
// and types the Go code scans, a turn delivered twice read once, and
// which prompts are still running or were interrupted.
func TestThreadQueriesOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, trace_id, span_id, thread_id, session_id, phase, speaker, agent, role, seq, tool_name, content, status, start_ns, duration_ns) VALUES "
	fixtures := []string{
		cols + `('a:prompt:0', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'prompt', 0, '', '안녕하세요 세계', 'ok', 1000, 0),
		      ('a:response:1', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'response', 1, '', 'こんにちは 🚀 LAUNCH', 'ok', 2000, 1000),
		      ('b:tool_call:0', 't2', 'b', 'th', 's2', 'execute', 'worker', 'sub', 'tool_call', 0, 'grep', 'launch?', 'ok', 3000, 0),
		      ('c:prompt:0', 't2', 'c', 'th', 's2', 'review', 'worker', '', 'prompt', 0, '', 'other', 'ok', 4000, 0)`,
		cols + `('a:response:1', 't1', 'a', 'th', 's1', 'Plan', '플래너', '', 'response', 1, '', 'こんにちは 🚀 LAUNCH', 'ok', 2000, 1000)`,
		// A heartbeat refresh of c's prompt.
		`INSERT INTO conversations (turn_id, trace_id, span_id, thread_id, session_id, phase, speaker, role, content, status, start_ns, heartbeat_ns)
		 VALUES ('c:prompt:0', 't2', 'c', 'th', 's2', 'review', 'worker', 'prompt', 'other', 'ok', 4000, 9000)`,
		// Starred with a memo, then the memo changed: starred carries over.
		inlineSQL(t, NoteChange{Starred: ptr(true), Memo: ptr("old")}.insert("th", "a:response:1", 5)),
		inlineSQL(t, NoteChange{Memo: ptr("메모")}.insert("th", "a:response:1", 7)),
		inlineSQL(t, NoteChange{Starred: ptr(false), Memo: ptr("")}.insert("th", "c:prompt:0", 9)),
	}
	f := TurnFilter{Phases: []string{"PLAN", "review"}, Role: "response", Speaker: "플래너", Agent: AgentMain,
		FromNS: 1500, ToNS: 2500, Query: "🚀 launch", Starred: true, HideInternal: true}
	cond, condArgs := f.conditions("th")
	all, _ := TurnFilter{}.conditions("th")
	queries := []string{
		inline(t, turnsQuery("th", f, 5000, 10, 8).text, turnsQuery("th", f, 5000, 10, 8).args...),
		inline(t, selectTurnCount+cond, append([]any{"th"}, condArgs...)...),
		inline(t, turnsQuery("th", TurnFilter{}, 5000, 2, 8).text, turnsQuery("th", TurnFilter{}, 5000, 2, 8).args...),
		inline(t, selectTurnCount+all, "th"),
		inline(t, selectPhaseCounts, uint8(0), "th"),
		inline(t, selectFacets, "th"),
		inline(t, selectTraces, "th"),
		inline(t, selectNotes, "th"),
		inline(t, selectNote, "th", "a:response:1"),
		inline(t, selectContent, "th", "a:response:1"),
		inline(t, selectTurnExists, "th", "b:tool_call:0"),
	}
	for _, tf := range []TurnFilter{{Agent: "sub", Tool: "grep"}, {Query: "세계"}, {Query: "こんにちは"}, {Session: "s2"}} {
		c, a := tf.conditions("th")
		queries = append(queries, inline(t, selectTurnCount+c, append([]any{"th"}, a...)...))
	}
	queries = append(queries, inline(t, turnsQuery("th", TurnFilter{}, 5000, 10, 8).text, turnsQuery("th", TurnFilter{}, 5000, 10, 8).args...))
	r := runModern(t, fixtures, queries).Results
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
		{"phase counts", rowsOf(4, "phase_key", "phase_written", "phase_calls"), "plan Plan 1, execute execute 0, review review 1"},
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
		// A prompt or tool call runs until its span has an answer row, while
		// it started or sent a heartbeat since the cutoff (5000).
		{"running or interrupted, newest first", rowsOf(15, "turn_id", "call_state"), "c:prompt:0 1, b:tool_call:0 2, a:response:1 0, a:prompt:0 0"},
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
	wantTypes := map[string]string{"stored_bytes": "UInt64", "call_state": "UInt8", "content_prefix": "String"}
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
