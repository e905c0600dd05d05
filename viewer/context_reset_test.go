package viewer_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// A reset starts the recent context anew; every turn stays in the thread.
func TestContextResetStartsAnew(t *testing.T) {
	h, conn := newServer(t)
	var rows []schema.Turn
	for i := range 3 {
		p, r := call("rs", fmt.Sprintf("a%d", i), "plan", 0, "planner", "openai", "gpt-5", 2*i, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
		rows = append(rows, p, r)
	}
	testkit.InsertTurns(t, conn, rows...)

	res := send(t, h, http.MethodPost, "/api/threads/rs/reset", "application/json", `{}`)
	if res.status != http.StatusOK || !strings.Contains(res.body, `"reset_at"`) {
		t.Fatalf("POST reset: status %d, body %s", res.status, res.body)
	}
	var ctxAns contextAnswer
	getJSON(t, h, "/api/threads/rs/context", http.StatusOK, &ctxAns)
	if len(ctxAns.Messages) != 0 {
		t.Errorf("context right after the reset:\n%s\nwant none", contextLines(ctxAns.Messages))
	}

	// Said after the reset (the reset is past the newest turn, at t0+5s
	// at least, and now): only that is context.
	p, r := call("rs", "b0", "plan", 0, "planner", "openai", "gpt-5", 0, "new q", "new a")
	p.StartNS, r.StartNS = uint64(nowNS()), uint64(nowNS())+1
	testkit.InsertTurns(t, conn, p, r)
	getJSON(t, h, "/api/threads/rs/context?limit=200", http.StatusOK, &ctxAns)
	if got := contextLines(ctxAns.Messages); got != "user:new q\nassistant:new a\n" {
		t.Errorf("context after the reset:\n%s\nwant only what was said after it", got)
	}

	var th turnsBody
	getJSON(t, h, "/api/threads/rs", http.StatusOK, &th)
	var roles []string
	for _, tn := range th.Turns {
		roles = append(roles, tn.Role)
	}
	if len(th.Turns) != 9 || !strings.Contains(strings.Join(roles, " "), "response context_reset prompt") {
		t.Errorf("thread after the reset: %d turns, roles %v; want the 8 said and the reset between", len(th.Turns), roles)
	}
	page := get(t, h, "/threads/rs")
	if !strings.Contains(page.body, "context reset at") {
		t.Errorf("thread page shows no reset divider:\n%s", page.body)
	}

	// A second reset moves the start again.
	send(t, h, http.MethodPost, "/api/threads/rs/reset", "application/json", `{}`)
	getJSON(t, h, "/api/threads/rs/context", http.StatusOK, &ctxAns)
	if len(ctxAns.Messages) != 0 {
		t.Errorf("context after a second reset:\n%s\nwant none", contextLines(ctxAns.Messages))
	}
}

func TestContextResetRefused(t *testing.T) {
	h, conn := newServer(t)
	p, r := call("rf", "a", "plan", 0, "planner", "openai", "gpt-5", 0, "q", "a")
	testkit.InsertTurns(t, conn, p, r)
	tests := []struct {
		path, contentType, body string
		header                  []string
		status                  int
	}{
		{"/api/threads/nope/reset", "application/json", `{}`, nil, http.StatusNotFound},
		{"/api/threads/rf/reset", "application/json", `{"at": 1}`, nil, http.StatusBadRequest},
		{"/api/threads/rf/reset", "application/json", `{} {}`, nil, http.StatusBadRequest},
		{"/api/threads/rf/reset", "text/plain", `{}`, nil, http.StatusUnsupportedMediaType},
		{"/api/threads/rf/reset", "application/json", `{}`, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		res := send(t, h, http.MethodPost, tt.path, tt.contentType, tt.body, tt.header...)
		if res.status != tt.status {
			t.Errorf("POST %s %s %v: status %d, want %d: %s", tt.path, tt.body, tt.header, res.status, tt.status, res.body)
		}
	}
	var ctxAns contextAnswer
	getJSON(t, h, "/api/threads/rf/context", http.StatusOK, &ctxAns)
	if len(ctxAns.Messages) != 2 {
		t.Errorf("context after refused resets:\n%s\nwant both messages", contextLines(ctxAns.Messages))
	}
}

// max_tokens keeps the newest messages that fit: stored output tokens for
// an answer of text alone, else bytes/4 rounded up.
func TestRecentContextMaxTokens(t *testing.T) {
	h, conn := newServer(t)
	p0, r0 := call("mt", "a", "plan", 0, "planner", "openai", "gpt-5", 0, strings.Repeat("x", 400), "old answer")
	p1, r1 := call("mt", "b", "plan", 0, "planner", "openai", "gpt-5", 2, strings.Repeat("y", 40), strings.Repeat("z", 400))
	r1.TokensOut, r1.TokensReasoning = u32(30), u32(5) // 25 tokens of text
	testkit.InsertTurns(t, conn, p0, r0, p1, r1)
	tests := []struct {
		maxTokens int
		want      string
		tokens    int
	}{
		{25, "assistant", 25},
		{24, "", 0},
		{35, "user assistant", 35},
		{137, "assistant user assistant", 38},
		{1000, "user assistant user assistant", 138},
	}
	for _, tt := range tests {
		var got contextAnswer
		body := getJSON(t, h, fmt.Sprintf("/api/threads/mt/context?max_tokens=%d", tt.maxTokens), http.StatusOK, &got)
		var roles []string
		for _, m := range got.Messages {
			roles = append(roles, m.Role)
		}
		var total struct{ Tokens int }
		_ = json.Unmarshal([]byte(body), &total)
		if strings.Join(roles, " ") != tt.want || total.Tokens != tt.tokens {
			t.Errorf("max_tokens=%d: roles %v, %d tokens; want %q, %d tokens", tt.maxTokens, roles, total.Tokens, tt.want, tt.tokens)
		}
	}
	var got contextAnswer
	getJSON(t, h, "/api/threads/mt/context?max_tokens=1000&limit=1", http.StatusOK, &got)
	if len(got.Messages) != 1 {
		t.Errorf("max_tokens with limit=1: %d messages, want 1", len(got.Messages))
	}
	for _, bad := range []string{"0", "-3", "many", "10000001"} {
		var e struct{ Error string }
		getJSON(t, h, "/api/threads/mt/context?max_tokens="+bad, http.StatusBadRequest, &e)
		if !strings.HasPrefix(e.Error, "max_tokens:") {
			t.Errorf("max_tokens=%s: error %q, want it to name max_tokens", bad, e.Error)
		}
	}
}

func nowNS() int64 { return time.Now().UnixNano() }
