package viewer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

type contextAnswer struct {
	ThreadID string                 `json:"thread_id"`
	Messages []store.ContextMessage `json:"messages"`
}

// contextLines writes messages as role:content lines, for comparing.
func contextLines(msgs []store.ContextMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s:%s\n", m.Role, m.Content)
	}
	return b.String()
}

// contextFixture stores thread ctx: plain calls, messages JSON prompts in
// both shapes, a tool loop, a failed call and a duplicate delivery.
func contextFixture(t *testing.T) http.Handler {
	t.Helper()
	h, conn := newServer(t)
	var rows []schema.Turn
	add := func(span string, start int, prompt, response string) {
		p, r := call("ctx", span, "plan", 0, "planner", "openai", "gpt-5", start, prompt, response)
		rows = append(rows, p)
		if response != "" {
			rows = append(rows, r)
		}
	}
	add("a", 0, "plain question", "plain answer")
	add("b", 10, `[{"role":"system","content":"You plan."},{"role":"user","content":"plain question"},`+
		`{"role":"assistant","content":"plain answer"},{"role":"user","content":"second question"}]`,
		`[{"role":"assistant","parts":[{"type":"text","content":"Let me read it."},{"type":"tool_call","name":"read_file","arguments":{"path":"a.go"}}]}]`)
	// The tool loop: the prompt ends in a tool result, the answer is a tool call.
	add("c", 20, `[{"role":"user","content":"second question"},{"role":"assistant","tool_calls":[{"function":{"name":"read_file","arguments":"{}"}}]},`+
		`{"role":"tool","tool_call_id":"call_1","content":"package a"}]`,
		`{"role":"assistant","tool_calls":[{"function":{"name":"run_tests","arguments":"{}"}}]}`)
	add("d", 30, `[{"role":"system","parts":[{"type":"text","content":"You plan."}]},`+
		`{"role":"user","parts":[{"type":"text","content":"third question"}]},{"role":"user","parts":[{"type":"text","content":"and a fourth"}]}]`,
		"final answer")
	failed, _ := call("ctx", "e", "plan", 0, "planner", "openai", "gpt-5", 40, "will fail", "")
	errRow := failed
	errRow.TurnID, errRow.Role, errRow.Seq, errRow.StartNS = schema.ResponseTurnID("e", true), schema.RoleError, 1, at(41)
	errRow.Content, errRow.Error, errRow.Status = "503 unavailable", "503 unavailable", schema.StatusError
	tool := failed
	tool.TurnID, tool.SpanID, tool.Role, tool.StartNS, tool.Content = "t:tool_result:0", "t", schema.RoleToolResult, at(42), "tool output"
	rows = append(rows, failed, errRow, tool)
	testkit.InsertTurns(t, conn, rows...)
	testkit.InsertTurns(t, conn, rows[1]) // the first answer again
	return h
}

func TestRecentContextAPI(t *testing.T) {
	h := contextFixture(t)
	all := `user:plain question
assistant:plain answer
user:second question
assistant:Let me read it.
user:third question
user:and a fourth
assistant:final answer
user:will fail
`
	tests := []struct {
		query string
		want  string
	}{
		{"", all},
		{"?limit=200", all},
		{"?limit=3", "user:and a fourth\nassistant:final answer\nuser:will fail\n"},
		{"?limit=1", "user:will fail\n"},
	}
	for _, tt := range tests {
		var got contextAnswer
		getJSON(t, h, "/api/threads/ctx/context"+tt.query, http.StatusOK, &got)
		if got.ThreadID != "ctx" || contextLines(got.Messages) != tt.want {
			t.Errorf("context%s of %s:\n%s\nwant:\n%s", tt.query, got.ThreadID, contextLines(got.Messages), tt.want)
		}
	}
	var got contextAnswer
	getJSON(t, h, "/api/threads/ctx/context?limit=2", http.StatusOK, &got)
	// Decoding keeps UTC only from a time written with "Z": an offset such
	// as +00:00 decodes to Local or a fixed zone.
	if m := got.Messages[0]; m.TurnID != "d:response:1" || m.Speaker != "planner" || m.Phase != "plan" || m.Time.Location() != time.UTC || m.Time.UnixNano() != int64(at(31)) {
		t.Errorf("message = %+v (time in %v), want turn d:response:1 of planner in plan at t0+31s UTC", m, m.Time.Location())
	}
}

func TestRecentContextDefaultLimit(t *testing.T) {
	h, conn := newServer(t)
	var rows []schema.Turn
	for i := range 15 {
		p, r := call("long", fmt.Sprintf("s%02d", i), "plan", 0, "planner", "openai", "gpt-5", 2*i, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
		rows = append(rows, p, r)
	}
	testkit.InsertTurns(t, conn, rows...)
	var got contextAnswer
	getJSON(t, h, "/api/threads/long/context", http.StatusOK, &got)
	want := "user:q10\nassistant:a10\nuser:q11\nassistant:a11\nuser:q12\nassistant:a12\nuser:q13\nassistant:a13\nuser:q14\nassistant:a14\n"
	if contextLines(got.Messages) != want {
		t.Errorf("default context:\n%s\nwant the last 10:\n%s", contextLines(got.Messages), want)
	}
}

// Tool loops yield no message: the context reads further back until it has
// enough.
func TestRecentContextReadsPastToolLoops(t *testing.T) {
	h, conn := newServer(t)
	p, r := call("loop", "first", "execute", 0, "executor", "openai", "gpt-5", 0, "do it", "on it")
	rows := []schema.Turn{p, r}
	for i := range 12 {
		p, r := call("loop", fmt.Sprintf("l%02d", i), "execute", 0, "executor", "openai", "gpt-5", 10+2*i,
			`[{"role":"user","content":"do it"},{"role":"tool","tool_call_id":"c","content":"ok"}]`,
			`{"role":"assistant","tool_calls":[{"function":{"name":"step","arguments":"{}"}}]}`)
		rows = append(rows, p, r)
	}
	testkit.InsertTurns(t, conn, rows...)
	msgs, err := store.RecentContext(context.Background(), conn, "loop", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := contextLines(msgs); got != "user:do it\nassistant:on it\n" {
		t.Errorf("context past 24 tool-loop turns:\n%s\nwant the first call", got)
	}
	var got contextAnswer
	getJSON(t, h, "/api/threads/loop/context?limit=2", http.StatusOK, &got)
	if contextLines(got.Messages) != contextLines(msgs) {
		t.Errorf("API context:\n%s\nwant what RecentContext returns:\n%s", contextLines(got.Messages), contextLines(msgs))
	}
}

func TestRecentContextErrors(t *testing.T) {
	h := contextFixture(t)
	for _, limit := range []string{"0", "201", "ten", "-1"} {
		var e struct{ Error string }
		getJSON(t, h, "/api/threads/ctx/context?limit="+limit, http.StatusBadRequest, &e)
		if !strings.HasPrefix(e.Error, "limit:") {
			t.Errorf("limit=%s: error %q, want it to name limit", limit, e.Error)
		}
	}
	var e struct{ Error string }
	getJSON(t, h, "/api/threads/nope/context", http.StatusNotFound, &e)

	_, conn := newServer(t)
	if _, err := store.RecentContext(context.Background(), conn, "nope", 10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RecentContext of an unknown thread: %v, want ErrNotFound", err)
	}
	if _, err := store.RecentContext(context.Background(), conn, "nope", 0); err == nil {
		t.Error("RecentContext with limit 0: no error, want one")
	}
}
