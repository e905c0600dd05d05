package store

import (
	"fmt"
	"strings"
	"testing"
)

// The compare page's call reads on a modern server (chDB 26.x): a
// thread's turns without content, newest first, internal ones left out, a
// turn stored twice read once; and the turns of the call a turn id or a
// span id names, a turn without a span standing alone.
func TestCallQueriesOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, thread_id, phase, speaker, round, role, seq, model, content, internal, tokens_in, cost_usd, start_ns) VALUES "
	fixtures := []string{
		cols + `('a:prompt:0', 'a', 'th', 'plan', '플래너', 0, 'prompt', 0, 'gpt', 'q', 0, NULL, NULL, 1000),
		       ('a:response:1', 'a', 'th', 'plan', '플래너', 0, 'response', 1, 'gpt', 'plan 🚀', 0, 12, 0.5, 2000),
		       ('b:prompt:0', 'b', 'th', 'review', 'reviewer', 1, 'prompt', 0, 'gpt', 'q', 0, NULL, NULL, 3000),
		       ('lone', '', 'th', 'review', 'reviewer', 1, 'system', 0, '', 'alone', 0, NULL, NULL, 3500),
		       ('lone2', '', 'th', 'review', 'reviewer', 1, 'system', 0, '', 'alone too', 0, NULL, NULL, 3600),
		       ('i:prompt:0', 'i', 'th', 'plan', 'x', 0, 'prompt', 0, 'gpt', 'q', 1, NULL, NULL, 4000),
		       ('o:prompt:0', 'a', 'other', 'plan', 'x', 0, 'prompt', 0, 'gpt', 'q', 0, NULL, NULL, 5000)`,
		cols + `('a:response:1', 'a', 'th', 'plan', '플래너', 0, 'response', 1, 'gpt', 'plan 🚀', 0, 12, 0.5, 2000)`,
	}
	queries := []string{
		inlineSQL(t, callTurns("th", 10)),
		inlineSQL(t, callOf("th", "a:prompt:0")),
		inlineSQL(t, callOf("th", "a")),
		inlineSQL(t, callOf("th", "lone")),
		inlineSQL(t, callOf("th", "o:prompt:0")),
		inlineSQL(t, callTurns("th", 2)),
	}
	r := runModern(t, fixtures, queries).Results
	ids := func(i int) string {
		var got []string
		for _, row := range r[i].Rows {
			got = append(got, fmt.Sprint(row["turn_id"]))
		}
		return strings.Join(got, ",")
	}
	tests := []struct{ name, got, want string }{
		{"the thread's turns, newest first, once", ids(0), "lone2,lone,b:prompt:0,a:response:1,a:prompt:0"},
		{"the call of a prompt", ids(1), "a:response:1,a:prompt:0"},
		{"the call of a span", ids(2), "a:response:1,a:prompt:0"},
		{"a turn without a span", ids(3), "lone"},
		{"another thread's turn", ids(4), ""},
		{"the newest two", ids(5), "lone2,lone"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	wantTypes := map[string]string{"tokens_in": "Nullable(UInt32)", "cost_usd": "Nullable(Float64)", "round": "UInt16", "start_ns": "UInt64"}
	for _, c := range r[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("column %s is %s, want %s", c.Name, c.Type, want)
		}
	}
}
