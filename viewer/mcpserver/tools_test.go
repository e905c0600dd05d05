package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
	"github.com/convtrace/convtrace/viewer/mcpserver"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// connect serves the tools over a migrated database with turns and
// returns a client's session to them, closed when the test ends.
func connect(t *testing.T, turns ...schema.Turn) *mcp.ClientSession {
	t.Helper()
	conn, _ := testkit.Open(t)
	testkit.InsertTurns(t, conn, turns...)
	return serve(t, store.New(conn, 200, 5*time.Minute))
}

// serve serves the tools over st and returns a client's session to
// them, closed when the test ends.
func serve(t *testing.T, st mcpserver.Store, opts ...mcpserver.Option) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(st, "test", opts...)
	ct, sct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, sct, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool, fails the test on a tool error, and decodes the
// answer into out; it returns the answer's size on the wire.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) int {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: tool error %v", name, args, res.Content[0].(*mcp.TextContent).Text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	wire, _ := json.Marshal(res)
	return len(wire)
}

// exchange is a prompt and its response, the prompt chat messages JSON.
func exchange(thread, span string, start time.Time, msgs []genai.Message, answer string) []schema.Turn {
	base := schema.Turn{TraceID: "trace-" + thread, SpanID: span, Project: "p", ThreadID: thread, Phase: "plan",
		Speaker: "planner", Operation: schema.OperationChat, Provider: "openai", Model: "gpt-5", Status: schema.StatusOK}
	p, r := base, base
	p.TurnID, p.Role, p.StartNS, p.Content = schema.PromptTurnID(span), schema.RolePrompt, uint64(start.UnixNano()), genai.Render(msgs)
	r.TurnID, r.Role, r.Seq, r.StartNS, r.Content = schema.ResponseTurnID(span, false), schema.RoleResponse, 1, uint64(start.Add(time.Second).UnixNano()), answer
	p.ContentBytes, r.ContentBytes = uint32(len(p.Content)), uint32(len(r.Content))
	return []schema.Turn{p, r}
}

func user(text string) genai.Message {
	return genai.Message{Role: "user", Parts: []genai.Part{genai.Text(text)}}
}

// A prompt shows its last messages, the history before them counted; a
// text past text_bytes is cut and says so.
func TestGetThreadMessages(t *testing.T) {
	start := time.Now().Add(-time.Hour)
	history := []genai.Message{{Role: "system", Parts: []genai.Part{genai.Text("be brief")}}, user("first question"),
		{Role: "assistant", Parts: []genai.Part{genai.Text("an answer")}}, user("what now? " + strings.Repeat("ab", 400))}
	cs := connect(t, exchange("th-msgs", "s1", start, history, strings.Repeat("é", 300))...)
	var got struct {
		Phases []page.PhaseGroup[struct {
			Role            string `json:"role"`
			Text            string `json:"text"`
			Messages        []struct{ Role, Text string }
			EarlierMessages int  `json:"earlier_messages"`
			Cut             bool `json:"cut"`
		}] `json:"phases"`
		More string `json:"more"`
	}
	call(t, cs, "get_thread", map[string]any{"thread_id": "th-msgs", "text_bytes": 256}, &got)
	if len(got.Phases) != 1 || got.Phases[0].Name != "Plan" || len(got.Phases[0].Rounds[0].Turns) != 2 {
		t.Fatalf("get_thread: %+v, want one plan phase of two turns", got.Phases)
	}
	prompt, answer := got.Phases[0].Rounds[0].Turns[0], got.Phases[0].Rounds[0].Turns[1]
	if len(prompt.Messages) != 1 || prompt.Messages[0].Role != "user" || len(prompt.Messages[0].Text) != 256 ||
		!strings.HasPrefix(prompt.Messages[0].Text, "what now? ") || prompt.EarlierMessages != 3 || !prompt.Cut {
		t.Errorf("prompt %+v: want its last message cut to 256 bytes, 3 earlier", prompt)
	}
	if answer.Text != strings.Repeat("é", 128) || !answer.Cut || !strings.Contains(got.More, "turn_id") {
		t.Errorf("answer %q (cut %v), more %q: want 128 é, cut, and how to read more", answer.Text, answer.Cut, got.More)
	}
}

// search pages with next and after, each hit once; recent_context cuts a
// long context to the size bound and says what it left out.
func TestSearchPagesAndContextBound(t *testing.T) {
	// 200 ns past a second: a float64 (as a JSON reader may hold a number)
	// rounds such a time up, past the turn it names.
	start := time.Now().Add(-time.Hour).Truncate(time.Second).Add(200)
	var turns []schema.Turn
	for i := range 150 {
		turns = append(turns, exchange("th-long", fmt.Sprintf("s%03d", i), start.Add(time.Duration(i)*time.Minute),
			[]genai.Message{user(fmt.Sprintf("needle %d %s", i, strings.Repeat("q", 4000)))}, strings.Repeat("a", 4000))...)
	}
	cs := connect(t, turns...)

	type page struct {
		Hits []struct {
			TurnID  string `json:"turn_id"`
			Snippet string `json:"snippet"`
		} `json:"hits"`
		Next string `json:"next"`
	}
	seen := map[string]bool{}
	var after string
	for pages := 0; ; pages++ {
		var p page
		args := map[string]any{"q": "NEEDLE", "limit": 100}
		if after != "" {
			args["after"] = after
		}
		call(t, cs, "search", args, &p)
		for _, h := range p.Hits {
			if seen[h.TurnID] || !strings.HasPrefix(h.Snippet, "needle ") {
				t.Errorf("hit %s (%q): seen before, or no snippet at the match", h.TurnID, h.Snippet)
			}
			seen[h.TurnID] = true
		}
		if p.Next == "" {
			break
		}
		if pages > 2 {
			t.Fatal("search pages do not end")
		}
		after = p.Next
	}
	if len(seen) != 150 {
		t.Errorf("search pages: %d distinct hits, want 150", len(seen))
	}

	var ctx struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
			Cut     bool   `json:"cut"`
		} `json:"messages"`
		More string `json:"more"`
	}
	size := call(t, cs, "recent_context", map[string]any{"thread_id": "th-long", "limit": 200, "text_bytes": 65536}, &ctx)
	if size > mcpserver.MaxAnswerBytes+1<<10 || len(ctx.Messages) == 0 || !ctx.Messages[0].Cut || ctx.More == "" {
		t.Errorf("recent_context of 200 messages of 4 KB: %d bytes, %d messages, more %q; want at most %d, cut, said",
			size, len(ctx.Messages), ctx.More, mcpserver.MaxAnswerBytes)
	}
	if last := ctx.Messages[len(ctx.Messages)-1]; last.Role != "assistant" {
		t.Errorf("recent_context ends with %s, want the last answer", last.Role)
	}
}

// failingStore fails to list threads as ClickHouse does, quoting the query.
type failingStore struct{ mcpserver.Store }

const storeError = "code: 62, message: Syntax error: failed at position 120 (SELECT thread_id FROM turns WHERE project = 'p')"

func (failingStore) Threads(context.Context, store.ThreadFilter) (store.ThreadPage, error) {
	return store.ThreadPage{}, errors.New(storeError)
}

// A failed query is answered without its details, which go to the log.
func TestStoreFailure(t *testing.T) {
	log := new(testkit.Buffer)
	cs := serve(t, failingStore{}, mcpserver.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_threads", Arguments: map[string]any{"project": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "list_threads failed") || strings.Contains(text, "SELECT") {
		t.Errorf("list_threads on a failing store: error %v, %q; want a tool error without the query", res.IsError, text)
	}
	if !strings.Contains(log.String(), "Syntax error") {
		t.Errorf("log %q, want the store's error", log)
	}
}

// Arguments as agents write them: one type per argument in every input
// schema; "by" as one string; a count of 0 refused like -5 and 101; a
// value of the wrong type refused naming the argument and the type.
func TestArgumentsAsAgentsWriteThem(t *testing.T) {
	start := time.Now().Add(-time.Hour)
	tagged := exchange("tagged", "s2", start, []genai.Message{user("card work")}, "done")
	for i := range tagged {
		tagged[i].Attributes = []schema.Attr{{Key: schema.KeyThreadAttrPrefix + "task", Value: "T-7"}}
	}
	cs := connect(t, append(exchange("th", "s1", start, []genai.Message{user("plan it")}, "the plan"), tagged...)...)
	var task struct {
		Threads []struct {
			ID string `json:"thread_id"`
		} `json:"threads"`
	}
	call(t, cs, "list_threads", map[string]any{"attr": "task=T-7"}, &task)
	if len(task.Threads) != 1 || task.Threads[0].ID != "tagged" {
		t.Errorf("list_threads attr task=T-7: %+v, want the tagged thread alone", task.Threads)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for name, p := range schema.Properties {
			if _, one := p.Type.(string); !one {
				t.Errorf("%s's argument %s has the type %v: want one type", tool.Name, name, p.Type)
			}
		}
	}

	var cost struct {
		Table struct {
			By []string `json:"by"`
		} `json:"table"`
	}
	call(t, cs, "cost", map[string]any{"by": "phase"}, &cost)
	call(t, cs, "cost", map[string]any{"by": "day, model"}, &cost)
	if !slices.Equal(cost.Table.By, []string{"day", "model"}) {
		t.Errorf(`cost "by": "day, model" grouped by %v`, cost.Table.By)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"list_threads", map[string]any{"limit": 0}, "limit: 0 is not a number from 1 to 100"},
		{"list_threads", map[string]any{"limit": -5}, "limit: -5 is not a number from 1 to 100"},
		{"list_threads", map[string]any{"limit": "ten"}, "bad argument limit: a JSON string where a whole number belongs"},
		{"get_thread", map[string]any{"thread_id": "th", "text_bytes": 0}, "text_bytes: 0 is not a number from 256 to 65536"},
		{"cost", map[string]any{"by": 3}, "bad argument by"},
		{"search", map[string]any{"q": "plan", "colour": "red"}, `unknown argument "colour"`},
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
