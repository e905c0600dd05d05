package viewer_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

type turnsBody struct {
	ThreadID string        `json:"thread_id"`
	Turns    []viewer.Turn `json:"turns"`
}

func apiFixture(t *testing.T) http.Handler {
	h, conn := newServer(t)
	const th = "th-api"
	p1, r1 := call(th, "k1", "Plan", 0, "planner", "openai", "gpt-5", 10, "plan", "the plan")
	r1.TokensIn, r1.TokensOut, r1.CostUSD = u32(100), u32(20), f64(0.01)
	r1.Attributes = []schema.Attr{{Key: "http.status", Value: "200"}}
	p2, r2 := call(th, "k2", "review", 0, "critic", "anthropic", "claude", 20, "review", "ok")
	p3, r3 := call(th, "k3", "plan", 1, "planner", "openai", "gpt-5", 30, "plan again", "plan v2")
	// A system row sharing its prompt's start time: seq orders them, not
	// the turn id.
	sys := p3
	sys.TurnID, sys.Role, sys.Seq, sys.Content = "k3:system:0", schema.RoleSystem, 0, "be brief"
	p3.TurnID, p3.Seq = "k3:prompt:1", 1
	// Another thread's turns never leak in.
	op, oresp := call("th-other", "o1", "plan", 0, "x", "openai", "gpt-5", 15, "other", "other")
	insertTurns(t, conn, r3, sys, p3, r2, p2, r1, p1, op, oresp)
	insertTurns(t, conn, r1) // delivered twice
	return h
}

func TestTurnsAPI(t *testing.T) {
	h := apiFixture(t)
	tests := []struct {
		query string
		want  []string // turn ids, in order
	}{
		{"", []string{"k1:prompt:0", "k1:response:1", "k2:prompt:0", "k2:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?phase=plan", []string{"k1:prompt:0", "k1:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?phase=PLAN", []string{"k1:prompt:0", "k1:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?role=response", []string{"k1:response:1", "k2:response:1", "k3:response:1"}},
		{"?phase=review&role=prompt", []string{"k2:prompt:0"}},
		{"?role=Response", nil}, // roles match exactly
		{"?phase=deploy", nil},
	}
	for _, tt := range tests {
		path := "/api/threads/th-api/turns" + tt.query
		var got turnsBody
		body := getJSON(t, h, path, http.StatusOK, &got)
		var ids []string
		for _, turn := range got.Turns {
			ids = append(ids, turn.TurnID)
		}
		if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
			t.Errorf("GET %s: turns %q, want %q", path, ids, tt.want)
		}
		if got.ThreadID != "th-api" {
			t.Errorf("GET %s: thread_id %q, want th-api", path, got.ThreadID)
		}
		if len(tt.want) == 0 && !strings.Contains(body, `"turns":[]`) {
			t.Errorf("GET %s = %s, want an empty list, not null", path, body)
		}
	}
}

func TestTurnsAPIValues(t *testing.T) {
	h := apiFixture(t)
	var raw struct {
		Turns []map[string]json.RawMessage `json:"turns"`
	}
	getJSON(t, h, "/api/threads/th-api/turns?role=response", http.StatusOK, &raw)
	if len(raw.Turns) != 3 {
		t.Fatalf("got %d responses, want 3", len(raw.Turns))
	}
	tests := []struct {
		turn  int
		field string
		want  string
	}{
		{0, "tokens_in", "100"},
		{0, "tokens_out", "20"},
		{0, "cost_usd", "0.01"},
		{0, "tokens_cache_read", "null"},
		{0, "attributes", `{"http.status":"200"}`},
		{0, "duration_ns", "1000000000"},
		{1, "tokens_in", "null"},
		{1, "tokens_out", "null"},
		{1, "cost_usd", "null"},
		{1, "running", "false"},
		{1, "attributes", "{}"},
	}
	for _, tt := range tests {
		if got := string(raw.Turns[tt.turn][tt.field]); got != tt.want {
			t.Errorf("response %d: %s = %s, want %s", tt.turn, tt.field, got, tt.want)
		}
	}
}

func TestTurnsAPIRunning(t *testing.T) {
	h, conn := newServer(t)
	p1, r1 := call("th-run", "r1", "plan", 0, "planner", "openai", "gpt-5", 10, "done", "answer")
	p2, _ := call("th-run", "r2", "plan", 0, "planner", "openai", "gpt-5", 20, "still thinking", "")
	p3, _ := call("th-run", "r3", "plan", 0, "planner", "openai", "gpt-5", 30, "failed call", "")
	e3 := p3
	e3.TurnID, e3.Role, e3.Seq, e3.Status, e3.Error = schema.ResponseTurnID("r3", true), schema.RoleError, 1, schema.StatusError, "boom"
	// A chat call answered only by a tool call, as other conventions map
	// it: the answer row's duration says the call ended.
	p4, _ := call("th-run", "r4", "plan", 0, "planner", "openai", "gpt-5", 35, "use a tool", "")
	a4 := p4
	a4.TurnID, a4.Role, a4.Seq, a4.DurationNS = "r4:tool_call:1", schema.RoleToolCall, 1, uint64(2e9)
	tc := schema.Turn{TurnID: "t1:tool_call:0", SpanID: "t1", ThreadID: "th-run", Role: schema.RoleToolCall, StartNS: at(40), Operation: schema.OperationExecuteTool, ToolName: "grep"}
	insertTurns(t, conn, p1, r1, p2, p3, e3, p4, a4, tc)

	var got turnsBody
	getJSON(t, h, "/api/threads/th-run/turns?role=prompt", http.StatusOK, &got) // the filter hides the answers; running still sees them
	running := map[string]bool{}
	for _, turn := range got.Turns {
		running[turn.TurnID] = turn.Running
	}
	want := map[string]bool{"r1:prompt:0": false, "r2:prompt:0": true, "r3:prompt:0": false, "r4:prompt:0": false}
	for id, w := range want {
		if r, ok := running[id]; !ok || r != w {
			t.Errorf("%s running = %v (present %v), want %v", id, r, ok, w)
		}
	}
	getJSON(t, h, "/api/threads/th-run/turns?role=tool_call", http.StatusOK, &got)
	if len(got.Turns) != 2 || got.Turns[0].Running || !got.Turns[1].Running {
		t.Errorf("tool calls: %+v, want the answer of r4 not running and t1 (no result yet) running", got.Turns)
	}
}

func TestAPIUnknownThread(t *testing.T) {
	h := apiFixture(t)
	var got map[string]string
	getJSON(t, h, "/api/threads/nope/turns?phase=plan", http.StatusNotFound, &got)
	if got["error"] != "thread not found" {
		t.Errorf("error %q, want thread not found", got["error"])
	}
}
