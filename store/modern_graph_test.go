package store

import (
	"fmt"
	"strings"
	"testing"
)

// The agent graph's read on a modern server (chDB 26.x): each turn once,
// the newest revision of a turn stored twice, internal turns left out
// after the fold, in start order, with the types the Go code scans.
func TestGraphQueryOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, parent_turn_id, thread_id, phase, speaker, agent, model, role, seq, tool_name, cost_usd, internal, revision, start_ns) VALUES "
	fixtures := []string{
		cols + `('a:prompt:0', 'a', '', 'th', 'plan', '플래너', '', 'gpt-5', 'prompt', 0, '', NULL, 0, 0, 1000),
		      ('a:response:1', 'a', '', 'th', 'plan', '플래너', '', 'gpt-5', 'response', 1, '', 0.5, 0, 0, 2000),
		      ('b:tool_call:0', 'b', '', 'th', 'execute', '', 'sub', '', 'tool_call', 0, 'grep', NULL, 0, 0, 3000),
		      ('c:prompt:0', 'c', 'a:response:1', 'th', 'review', 'ghost', '', 'qwen', 'prompt', 0, '', NULL, 1, 0, 4000),
		      ('d:prompt:0', 'd', '', 'other', 'plan', 'x', '', 'gpt-5', 'prompt', 0, '', NULL, 0, 0, 500)`,
		// The response again, newer and cheaper.
		cols + `('a:response:1', 'a', '', 'th', 'plan', '플래너', '', 'gpt-5', 'response', 1, '', 0.25, 0, 1, 2000)`,
	}
	r := runModern(t, fixtures, []string{inline(t, selectGraphTurns, "th")}).Results
	var rows []string
	for _, row := range r[0].Rows {
		rows = append(rows, fmt.Sprint(row["turn_id"], " ", row["speaker"], " ", row["agent"], " ", row["tool_name"], " ", row["cost_usd"]))
	}
	if got, want := strings.Join(rows, ", "), "a:prompt:0 플래너   <nil>, a:response:1 플래너   0.25, b:tool_call:0  sub grep <nil>"; got != want {
		t.Errorf("graph turns %q, want %q", got, want)
	}
	wantTypes := map[string]string{"cost_usd": "Nullable(Float64)", "start_ns": "UInt64", "parent_turn_id": "String"}
	for _, c := range r[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("column %s is %s, want %s", c.Name, c.Type, want)
		}
	}
}
