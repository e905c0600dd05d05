package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer/mcpserver"
)

// toolNames lists the tools a session offers, with whether each only
// reads.
func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]bool {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = tool.Annotations != nil && tool.Annotations.ReadOnlyHint
	}
	return names
}

type contextOut struct {
	Messages []store.ContextMessage `json:"messages"`
	Tokens   int                    `json:"tokens"`
	More     string                 `json:"more"`
}

func contents(msgs []store.ContextMessage) string {
	var s []string
	for _, m := range msgs {
		s = append(s, m.Role+":"+m.Content)
	}
	return strings.Join(s, " | ")
}

// Without WithWrites no tool writes; with it, reset_context and set_title
// do, and the others still only read.
func TestWritingToolsOnlyWhenAllowed(t *testing.T) {
	start := time.Now().Add(-time.Hour)
	cs := connect(t, exchange("th", "s1", start, []genai.Message{user("plan it")}, "the plan")...)
	names := toolNames(t, cs)
	if _, ok := names["reset_context"]; ok || len(names) != 5 {
		t.Errorf("tools without writes: %v, want the five that read", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "set_title", Arguments: map[string]any{"thread_id": "th", "title": "x"}})
	if err == nil && !res.IsError {
		t.Error("set_title without writes: answered, want it refused")
	}

	conn, _ := testkit.Open(t)
	st := store.New(conn, 200, 5*time.Minute)
	names = toolNames(t, serve(t, st, mcpserver.WithWrites(st)))
	for name, readOnly := range names {
		writes := name == "reset_context" || name == "set_title"
		if readOnly == writes {
			t.Errorf("tool %s: read-only %v", name, readOnly)
		}
	}
	if len(names) != 7 {
		t.Errorf("tools with writes: %v, want seven", names)
	}
}

// reset_context starts recent_context anew; get_thread still reads every
// turn. max_tokens bounds recent_context.
func TestResetContextTool(t *testing.T) {
	conn, _ := testkit.Open(t)
	start := time.Now().Add(-time.Hour)
	testkit.InsertTurns(t, conn, exchange("th", "s1", start, []genai.Message{user("plan it")}, "the plan")...)
	testkit.InsertTurns(t, conn, exchange("th", "s2", start.Add(time.Minute), []genai.Message{user("again")}, "plan two")...)
	st := store.New(conn, 200, 5*time.Minute)
	cs := serve(t, st, mcpserver.WithWrites(st))

	var before contextOut
	call(t, cs, "recent_context", map[string]any{"thread_id": "th", "max_tokens": 3}, &before)
	if contents(before.Messages) != "assistant:plan two" || before.Tokens != 2 {
		t.Errorf("recent_context max_tokens 3: %q (%d tokens), want the last answer alone (2 tokens)", contents(before.Messages), before.Tokens)
	}

	var reset struct {
		ThreadID string    `json:"thread_id"`
		ResetAt  time.Time `json:"reset_at"`
	}
	call(t, cs, "reset_context", map[string]any{"thread_id": "th"}, &reset)
	if reset.ThreadID != "th" || reset.ResetAt.IsZero() {
		t.Errorf("reset_context answered %+v", reset)
	}
	var after contextOut
	call(t, cs, "recent_context", map[string]any{"thread_id": "th"}, &after)
	if len(after.Messages) != 0 {
		t.Errorf("recent_context after the reset: %q, want nothing", contents(after.Messages))
	}
	testkit.InsertTurns(t, conn, exchange("th", "s3", time.Now(), []genai.Message{user("fresh")}, "fresh answer")...)
	call(t, cs, "recent_context", map[string]any{"thread_id": "th"}, &after)
	if got := contents(after.Messages); got != "user:fresh | assistant:fresh answer" {
		t.Errorf("recent_context after the reset and a call: %q, want that call alone", got)
	}
	var thread struct {
		Total int `json:"total"`
	}
	call(t, cs, "get_thread", map[string]any{"thread_id": "th"}, &thread)
	if thread.Total != 7 {
		t.Errorf("get_thread after the reset: %d turns, want the 6 said and the reset", thread.Total)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"reset_context", map[string]any{"thread_id": "nope"}, "thread not found"},
		{"reset_context", map[string]any{"thread_id": " "}, "thread_id: is empty"},
		{"recent_context", map[string]any{"thread_id": "th", "max_tokens": 0}, "max_tokens: 0 is not a number from 1"},
		{"set_title", map[string]any{"thread_id": "nope", "title": "x"}, "thread not found"},
		{"set_title", map[string]any{"thread_id": "th", "title": strings.Repeat("é", 201)}, "title: 201 characters, at most 200"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, c.says) {
			t.Errorf("%s %v: error %v, %q; want a tool error saying %q", c.tool, c.args, res.IsError, text, c.says)
		}
	}
}

// A title set by an agent through set_title is the thread's title in the
// threads list, as a rename by hand would be; an empty one gives back the
// automatic title.
func TestSetTitleTool(t *testing.T) {
	conn, _ := testkit.Open(t)
	testkit.InsertTurns(t, conn, exchange("th", "s1", time.Now().Add(-time.Hour), []genai.Message{user("plan the launch")}, "the plan")...)
	st := store.New(conn, 200, 5*time.Minute)
	cs := serve(t, st, mcpserver.WithWrites(st))

	var th store.Thread
	call(t, cs, "set_title", map[string]any{"thread_id": "th", "title": "  Launch\nplan  "}, &th)
	if th.Title != "Launch plan" {
		t.Errorf("set_title answered the title %q, want %q", th.Title, "Launch plan")
	}
	var list struct {
		Threads []store.Thread `json:"threads"`
	}
	call(t, cs, "list_threads", map[string]any{}, &list)
	if len(list.Threads) != 1 || list.Threads[0].Title != "Launch plan" {
		b, _ := json.Marshal(list.Threads)
		t.Errorf("list_threads after set_title: %s, want the title set", b)
	}
	page, err := st.Threads(context.Background(), store.ThreadFilter{Limit: 10})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Title != "Launch plan" {
		t.Errorf("the viewer's threads list after set_title: %+v, %v", page.Threads, err)
	}
	call(t, cs, "set_title", map[string]any{"thread_id": "th", "title": ""}, &th)
	if th.Title != "plan the launch" {
		t.Errorf("set_title \"\": title %q, want the automatic one", th.Title)
	}
}
