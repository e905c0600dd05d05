package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/viewer"
	"github.com/convtrace/convtrace/viewer/mcpserver"
)

// mcpSession runs `convtrace mcp` on dsn as a child process and connects
// the SDK's client to it; both end with the test. What the server prints
// on stderr goes to the returned buffer.
func mcpSession(t *testing.T, dsn string) (*mcp.ClientSession, *testkit.Buffer) {
	t.Helper()
	stderr := new(testkit.Buffer)
	cmd := exec.Command(testkit.Binary(t), "mcp", "--clickhouse", dsn)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "convtrace-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to convtrace mcp: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if err := session.Close(); err != nil {
			t.Logf("close session: %v", err)
		}
		if t.Failed() {
			t.Logf("convtrace mcp stderr:\n%s", stderr)
		}
	})
	return session, stderr
}

// callTool calls a tool and decodes its structured answer into out; it
// returns the result, whose IsError says whether the tool refused.
func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if res.IsError || out == nil {
		return res
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return res
}

// resultText is the text of a tool's answer.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The MCP server, as a client sees it over the real `convtrace mcp`
// process: five tools with schemas, each answering from the demo run what
// the viewer and `convtrace cost` say, bad arguments refused with a
// message, and a thread of large turns cut to the size bound.
func TestMCPServer(t *testing.T) {
	dsn := testkit.DSN(t)
	code, out, stderr := runCapture(t, "demo", "--clickhouse", dsn)
	if code != 0 {
		t.Fatalf("demo: exit %d, stderr %q", code, stderr)
	}
	thread := strings.TrimSpace(out)
	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const bigThread = "th-mcp-big"
	testkit.InsertTurns(t, conn, bigTurns(bigThread, 30, 100<<10)...)

	session, _ := mcpSession(t, dsn)

	t.Run("tools", func(t *testing.T) {
		res, err := session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schema, _ := tool.InputSchema.(map[string]any)
			if schema["type"] != "object" || len(schema["properties"].(map[string]any)) == 0 {
				t.Errorf("tool %s: input schema %v, want an object with properties", tool.Name, tool.InputSchema)
			}
			for name, p := range schema["properties"].(map[string]any) {
				prop := p.(map[string]any)
				if items, ok := prop["items"].(map[string]any); ok {
					if prop["maxItems"] == nil || items["maxLength"] == nil {
						t.Errorf("tool %s: argument %s %v, want its items and their length bounded", tool.Name, name, prop)
					}
				} else if prop["type"] == "string" && prop["maxLength"] == nil {
					t.Errorf("tool %s: argument %s %v, want its length bounded", tool.Name, name, prop)
				}
			}
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || !strings.Contains(tool.Description, "At most") {
				t.Errorf("tool %s: annotations %+v, description %q; want read-only and its bounds said", tool.Name, tool.Annotations, tool.Description)
			}
		}
		slices.Sort(names)
		if want := []string{"cost", "get_thread", "list_threads", "recent_context", "search"}; !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})

	t.Run("list_threads", func(t *testing.T) {
		var got struct {
			Threads []store.Thread `json:"threads"`
			Older   string         `json:"older"`
		}
		callTool(t, session, "list_threads", map[string]any{"limit": 1}, &got)
		if len(got.Threads) != 1 || got.Older == "" {
			t.Fatalf("list_threads limit 1: %+v, want one thread and an older cursor", got)
		}
		first := got.Threads[0].ID
		callTool(t, session, "list_threads", map[string]any{"before": got.Older}, &got)
		ids := []string{first}
		for _, th := range got.Threads {
			ids = append(ids, th.ID)
		}
		if !slices.Contains(ids, thread) || !slices.Contains(ids, bigThread) || len(ids) != 2 {
			t.Errorf("list_threads pages: %v, want the demo thread %s and %s", ids, thread, bigThread)
		}
		callTool(t, session, "list_threads", map[string]any{"project": "demo"}, &got)
		if len(got.Threads) != 1 || got.Threads[0].ID != thread || got.Threads[0].Turns == 0 || got.Threads[0].Title == "" {
			t.Errorf("list_threads project demo: %+v, want the demo thread with its title and turns", got.Threads)
		}
	})

	t.Run("get_thread", func(t *testing.T) {
		var got mcpThread
		callTool(t, session, "get_thread", map[string]any{"thread_id": thread}, &got)
		if got.Thread.ID != thread || got.Shown == 0 || got.Shown != got.Total || strings.Contains(got.More, "older turns") {
			t.Fatalf("get_thread: thread %q, shown %d of %d, more %q", got.Thread.ID, got.Shown, got.Total, got.More)
		}
		if phases, want := got.phases(), "plan,review,execute,verify,revision"; phases != want {
			t.Errorf("get_thread phases %s, want %s", phases, want)
		}
		turns := 0
		for _, p := range got.Phases {
			for _, r := range p.Rounds {
				for _, turn := range r.Turns {
					turns++
					if turn.TurnID == "" || (turn.Text == "" && len(turn.Messages) == 0 && turn.Role != schema.RoleToolCall) {
						t.Errorf("turn %+v has no id or no text", turn)
					}
				}
			}
		}
		if turns != got.Shown {
			t.Errorf("get_thread: %d turns in phases, shown says %d", turns, got.Shown)
		}
		var review mcpThread
		callTool(t, session, "get_thread", map[string]any{"thread_id": thread, "phase": []string{"Review"}, "role": "response"}, &review)
		if review.phases() != "review" || review.Total == 0 || review.Total >= got.Total {
			t.Errorf("get_thread phase Review, role response: phases %q, %d of %d turns", review.phases(), review.Total, got.Total)
		}
	})

	t.Run("search", func(t *testing.T) {
		var got struct {
			Hits []struct {
				ThreadID    string `json:"thread_id"`
				ThreadTitle string `json:"thread_title"`
				TurnID      string `json:"turn_id"`
				Speaker     string `json:"speaker"`
				Phase       string `json:"phase"`
				Role        string `json:"role"`
				Snippet     string `json:"snippet"`
			} `json:"hits"`
		}
		callTool(t, session, "search", map[string]any{"q": "critique plan", "limit": 100}, &got)
		if len(got.Hits) == 0 {
			t.Fatal("search critique plan: no hit in the demo")
		}
		for _, h := range got.Hits {
			if h.ThreadID != thread || h.ThreadTitle == "" || h.TurnID == "" || h.Speaker == "" || h.Phase == "" || h.Role != schema.RolePrompt ||
				!strings.Contains(strings.ToLower(h.Snippet), "critique plan") || strings.Contains(h.Snippet, `"role"`) ||
				utf8.RuneCountInString(h.Snippet) > store.SnippetRunes+2 {
				t.Errorf("search hit %+v: want a prompt of the demo thread with a text snippet around the match", h)
			}
		}
		// Without a text, the filters alone: the demo's one patch.
		got.Hits = nil
		callTool(t, session, "search", map[string]any{"role": schema.RoleToolCall, "tool": "apply_patch"}, &got)
		if len(got.Hits) != 1 || got.Hits[0].ThreadID != thread || !strings.Contains(got.Hits[0].Snippet, "config.ts") {
			t.Errorf("search for the apply_patch calls: %+v, want the demo's one", got.Hits)
		}
	})

	t.Run("recent_context", func(t *testing.T) {
		var got struct {
			ThreadID string                 `json:"thread_id"`
			Messages []store.ContextMessage `json:"messages"`
		}
		callTool(t, session, "recent_context", map[string]any{"thread_id": thread, "limit": 7}, &got)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/api/threads/"+thread+"/context?limit=7", nil)
		req.Host = "127.0.0.1"
		viewer.New(conn).Handler().ServeHTTP(rec, req)
		var want struct {
			Messages []store.ContextMessage `json:"messages"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &want); rec.Code != http.StatusOK || err != nil {
			t.Fatalf("viewer context API: %d %s", rec.Code, rec.Body)
		}
		if len(got.Messages) != 7 || !reflect.DeepEqual(got.Messages, want.Messages) {
			t.Errorf("recent_context:\n%+v\nwant the viewer API's\n%+v", got.Messages, want.Messages)
		}
	})

	t.Run("cost", func(t *testing.T) {
		var got struct {
			Totals store.CostUsage `json:"totals"`
			Table  store.CostTable `json:"table"`
		}
		callTool(t, session, "cost", map[string]any{"from": "7d", "by": []string{"phase", "model"}}, &got)
		code, out, stderr := runCapture(t, "cost", "--clickhouse", dsn, "--since", "7d", "--by", "phase,model", "--format", "json")
		if code != 0 {
			t.Fatalf("convtrace cost: exit %d, %s", code, stderr)
		}
		var want struct {
			Totals store.CostUsage `json:"totals"`
			Rows   []store.CostGroup
		}
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if got.Totals.Calls == 0 || store.Deref(got.Totals.CostUSD) == 0 || !reflect.DeepEqual(got.Totals, want.Totals) {
			t.Errorf("cost totals %s, want convtrace cost's %s", usageJSON(got.Totals), usageJSON(want.Totals))
		}
		if !reflect.DeepEqual(got.Table.By, []string{"phase", "model"}) || !reflect.DeepEqual(got.Table.Rows, want.Rows) {
			t.Errorf("cost table by %v: %d rows, want convtrace cost's %d", got.Table.By, len(got.Table.Rows), len(want.Rows))
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			tool string
			args map[string]any
			want string
		}{
			{"get_thread", map[string]any{"thread_id": "no-such-thread"}, `thread "no-such-thread": thread not found`},
			{"get_thread", map[string]any{"thread_id": thread, "limit": 500}, "limit: 500 is not a number from 1 to 200"},
			{"get_thread", map[string]any{"thread_id": thread, "from": "last week"}, `from: "last week" is not a time`},
			{"get_thread", map[string]any{"thread_id": thread, "from": "1h", "to": "2h"}, `to: "2h" is before from "1h"`},
			{"get_thread", map[string]any{"thread_id": thread, "turn_id": "nope"}, "turn not found"},
			{"get_thread", map[string]any{}, "thread_id"},
			{"list_threads", map[string]any{"limit": 0.5}, "limit"},
			{"list_threads", map[string]any{"limit": 101}, "limit: 101 is not a number from 1 to 100"},
			{"list_threads", map[string]any{"before": "garbage"}, `before: "garbage" is not a page cursor`},
			{"search", map[string]any{"status": "maybe"}, "status"},
			{"search", map[string]any{"q": "plan", "after": "yesterday"}, "after"},
			{"search", map[string]any{"q": "plan", "colour": "red"}, "colour"},
			{"recent_context", map[string]any{"thread_id": "no-such-thread"}, "thread not found"},
			{"recent_context", map[string]any{"thread_id": thread, "limit": 201}, "limit: 201 is not a number from 1 to 200"},
			{"cost", map[string]any{"by": []string{"colour"}}, `by: "colour" is not one of day, model`},
			{"cost", map[string]any{"from": "tomorrow"}, `from: "tomorrow" is not a time`},
		}
		for _, tt := range tests {
			res := callTool(t, session, tt.tool, tt.args, nil)
			if text := resultText(res); !res.IsError || !strings.Contains(text, tt.want) {
				t.Errorf("%s %v: error %v, %q; want a tool error saying %q", tt.tool, tt.args, res.IsError, text, tt.want)
			}
		}
		// The server is still up after them.
		if _, err := session.ListTools(context.Background(), nil); err != nil {
			t.Errorf("list tools after the bad calls: %v", err)
		}
	})

	t.Run("size bound", func(t *testing.T) {
		var got mcpThread
		res := callTool(t, session, "get_thread", map[string]any{"thread_id": bigThread, "limit": 200, "text_bytes": 65536}, &got)
		wire, _ := json.Marshal(res)
		if len(wire) > mcpserver.MaxAnswerBytes+1<<10 {
			t.Errorf("get_thread of 30 turns of 100 KB: %d bytes, over %d", len(wire), mcpserver.MaxAnswerBytes)
		}
		if got.Total != 30 || got.TextBytes >= 65536 || !strings.Contains(got.More, "turn_id") {
			t.Errorf("get_thread of large turns: total %d, text_bytes %d, more %q; want 30, a smaller cut, and how to read more", got.Total, got.TextBytes, got.More)
		}
		last := got.Phases[len(got.Phases)-1].Rounds[0].Turns
		turn := last[len(last)-1]
		if !turn.Cut || len(turn.Text) > got.TextBytes {
			t.Errorf("a 100 KB turn: cut %v, %d bytes of text; want cut to %d", turn.Cut, len(turn.Text), got.TextBytes)
		}
		var one mcpThread
		callTool(t, session, "get_thread", map[string]any{"thread_id": bigThread, "turn_id": turn.TurnID, "text_bytes": 65536}, &one)
		if one.Shown != 1 || len(one.Phases[0].Rounds[0].Turns[0].Text) != 65536 || !one.Phases[0].Rounds[0].Turns[0].Cut {
			t.Errorf("get_thread turn_id %s text_bytes 65536: %+v; want its first 65536 bytes, cut", turn.TurnID, one.Phases)
		}
	})
}

// mcpThread is get_thread's answer as a client reads it.
type mcpThread struct {
	Thread    store.Thread `json:"thread"`
	Shown     int          `json:"shown"`
	Total     int          `json:"total"`
	TextBytes int          `json:"text_bytes"`
	More      string       `json:"more"`
	Phases    []struct {
		Phase  string `json:"phase"`
		Rounds []struct {
			Round uint16 `json:"round"`
			Turns []struct {
				TurnID   string `json:"turn_id"`
				Role     string `json:"role"`
				Text     string `json:"text"`
				Messages []struct{ Role, Text string }
				Cut      bool `json:"cut"`
			} `json:"turns"`
		} `json:"rounds"`
	} `json:"phases"`
}

// phases lists the answer's phase keys in order.
func (th mcpThread) phases() string {
	var keys []string
	for _, p := range th.Phases {
		keys = append(keys, p.Phase)
	}
	return strings.Join(keys, ",")
}

// bigTurns are n responses of a thread, each of size bytes of text.
func bigTurns(thread string, n, size int) []schema.Turn {
	text := strings.Repeat("0123456789abcdef", size/16)
	start := time.Now().Add(-time.Hour)
	turns := make([]schema.Turn, n)
	for i := range turns {
		span := thread + "-" + string(rune('a'+i))
		turns[i] = schema.Turn{
			TurnID: schema.ResponseTurnID(span, false), TraceID: "trace-" + thread, SpanID: span, Project: "big",
			ThreadID: thread, Phase: "execute", Speaker: "writer", Role: schema.RoleResponse, Seq: 1,
			Status: schema.StatusOK, StartNS: uint64(start.Add(time.Duration(i) * time.Second).UnixNano()),
			Content: text, ContentBytes: uint32(len(text)),
		}
	}
	return turns
}

// usageJSON prints a CostUsage's sums for a test's message.
func usageJSON(u store.CostUsage) string {
	b, _ := json.Marshal(u)
	return string(b)
}

// mcpPipe is `convtrace mcp` run as a child process, spoken to one line
// at a time on its stdin and stdout.
type mcpPipe struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *testkit.Buffer
}

// startMCP starts `convtrace mcp` on dsn, killed when the test ends.
func startMCP(t *testing.T, dsn string) *mcpPipe {
	t.Helper()
	p := &mcpPipe{t: t, cmd: exec.Command(testkit.Binary(t), "mcp", "--clickhouse", dsn), stderr: new(testkit.Buffer)}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	p.lines = bufio.NewScanner(stdout)
	p.lines.Buffer(nil, 64<<20) // room for an answer over the bound, to report it
	return p
}

// rpcAnswer is a JSON-RPC answer as a client reads it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		ServerInfo struct{ Name string } `json:"serverInfo"`
		IsError    bool                  `json:"isError"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// send writes line and a newline to the server.
func (p *mcpPipe) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write to convtrace mcp: %v\nstderr:\n%s", err, p.stderr)
	}
}

// answer reads the server's next line, and returns it decoded and its
// size in bytes.
func (p *mcpPipe) answer() (rpcAnswer, int) {
	p.t.Helper()
	if !p.lines.Scan() {
		p.t.Fatalf("no answer from convtrace mcp: %v\nstderr:\n%s", p.lines.Err(), p.stderr)
	}
	var a rpcAnswer
	if err := json.Unmarshal(p.lines.Bytes(), &a); err != nil || a.JSONRPC != "2.0" {
		p.t.Fatalf("stdout line %.200q: not a JSON-RPC answer (%v)", p.lines.Text(), err)
	}
	return a, len(p.lines.Bytes())
}

// exchange sends a request and returns its answer, which must carry id.
func (p *mcpPipe) exchange(request string, id int) rpcAnswer {
	p.t.Helper()
	p.send(request)
	a, _ := p.answer()
	if string(a.ID) != strconv.Itoa(id) {
		p.t.Fatalf("answer to %s: id %s, want %d", request, a.ID, id)
	}
	return a
}

// initialize opens the MCP session and returns the server's answer.
func (p *mcpPipe) initialize() rpcAnswer {
	p.t.Helper()
	a := p.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return a
}

// convtrace mcp writes the protocol alone on stdout, one JSON-RPC message
// a line, and ends with exit status 0 when its client closes stdin.
func TestMCPStdoutIsProtocol(t *testing.T) {
	_, dsn := testkit.Open(t)
	p := startMCP(t, dsn)
	if init := p.initialize(); init.Result == nil || init.Result.ServerInfo.Name != "convtrace" {
		t.Errorf("initialize: %+v, want convtrace's serverInfo", init)
	}
	if res := p.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_threads","arguments":{}}}`, 2); res.Result == nil || res.Result.IsError {
		t.Errorf("list_threads on an empty store: %+v", res)
	}
	p.stdin.Close()
	if p.lines.Scan() {
		t.Errorf("stdout after the last answer: %q", p.lines.Text())
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("convtrace mcp after stdin closed: %v\nstderr:\n%s", err, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "convtrace MCP server on stdio") {
		t.Errorf("stderr %q, want the server's start line", p.stderr)
	}
}

// A bad line gets a bounded JSON-RPC error answer and the same process
// serves the next: a line that is not JSON or over the frame bound, one
// that is not a JSON-RPC message, and requests whose arguments, method or
// id are 1 MB long. No answer passes MaxAnswerBytes, none quotes a huge
// argument whole, and no argument reaches ClickHouse unbounded.
func TestMCPBadFrames(t *testing.T) {
	_, dsn := testkit.Open(t)
	p := startMCP(t, dsn)
	p.initialize()
	huge := strings.Repeat("x", 1<<20)
	call := func(id int, tool string, args map[string]any) string {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const (
		parseError     = -32700
		invalidRequest = -32600
		methodNotFound = -32601
		invalidParams  = -32602
		toolError      = 1 // not a JSON-RPC code: a result whose isError is set
	)
	tests := []struct {
		name   string
		line   string
		wantID string // the answer's id, "null" when the line's is unknown
		code   int
		want   string // in the error's text
	}{
		{"not JSON", `{not json`, "null", parseError, "not JSON"},
		{"a 20 MB line", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"` + strings.Repeat(huge, 20) + `"}}`,
			"null", parseError, fmt.Sprintf("over the %d", mcpserver.MaxFrameBytes)},
		{"a batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "null", invalidRequest, "batches"},
		{"a string", `"ping"`, "null", invalidRequest, "one JSON-RPC message"},
		{"no version", `{"id":7,"method":"ping"}`, "7", invalidRequest, "version"},
		{"a 1 MB version", `{"jsonrpc":"` + huge + `","id":8,"method":"ping"}`, "8", invalidRequest, "bytes left out"},
		{"a 1 MB id", `{"jsonrpc":"2.0","id":"` + huge + `","method":"ping"}`, "null", invalidRequest, "id of 1048576 bytes"},
		{"a 1 MB method", `{"jsonrpc":"2.0","id":9,"method":"` + huge + `"}`, "9", methodNotFound, "bytes left out"},
		{"a 1 MB argument", call(10, "list_threads", map[string]any{"project": huge}), "10", toolError, "project"},
		{"a 1 MB turn_id", call(11, "get_thread", map[string]any{"thread_id": "th", "turn_id": huge}), "11", toolError, "turn_id"},
		{"a 1 MB argument name", call(12, "search", map[string]any{huge: "x"}), "12", toolError, "bytes left out"},
		{"1000 phases", call(13, "get_thread", map[string]any{"thread_id": "th", "phase": strings.Split(huge[:1000], "")}), "13", toolError, "phase"},
		{"a 1 MB tool name", call(14, huge, nil), "14", invalidParams, "bytes left out"},
		{"a turn_id at the bound", call(15, "get_thread", map[string]any{"thread_id": "th", "turn_id": huge[:1000]}), "15", toolError, "not found"},
	}
	ping := 100
	for _, tt := range tests {
		p.send(tt.line)
		got, size := p.answer()
		text := ""
		switch {
		case got.Error != nil:
			text = got.Error.Message
		case got.Result != nil && len(got.Result.Content) > 0:
			text = got.Result.Content[0].Text
		}
		code := 0
		if got.Error != nil {
			code = got.Error.Code
		} else if got.Result != nil && got.Result.IsError {
			code = toolError
		}
		if size > mcpserver.MaxAnswerBytes || len(text) > 1<<10 {
			t.Errorf("%s: an answer of %d bytes, its text %d; want at most %d, and a short text", tt.name, size, len(text), mcpserver.MaxAnswerBytes)
		}
		if string(got.ID) != tt.wantID || code != tt.code || !strings.Contains(text, tt.want) {
			t.Errorf("%s: id %s, code %d, text %.300q; want id %s, code %d, a text saying %q", tt.name, got.ID, code, text, tt.wantID, tt.code, tt.want)
		}
		if strings.Contains(text, "Code:") || strings.Contains(text, "Syntax") || strings.Contains(text, "SELECT") {
			t.Errorf("%s: %.300q quotes ClickHouse", tt.name, text)
		}
		ping++
		if pong := p.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, ping), ping); pong.Error != nil {
			t.Fatalf("ping after %s: %+v", tt.name, pong.Error)
		}
	}
	if res := p.exchange(call(200, "list_threads", nil), 200); res.Result == nil || res.Result.IsError {
		t.Errorf("list_threads after the bad lines: %+v", res)
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("convtrace mcp after stdin closed: %v\nstderr:\n%s", err, p.stderr)
	}
}

func TestMCPWithoutStore(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCapture(t, "mcp", "--data", dir)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "no local store in "+dir) {
		t.Errorf("convtrace mcp --data %s: exit %d, stdout %q, stderr %q; want exit 1 naming the missing store", dir, code, stdout, stderr)
	}
}
