package cliagent

import (
	"bufio"
	"os"
	"reflect"
	"testing"

	"github.com/convtrace/convtrace/instrument"
)

func f64(v float64) *float64 { return &v }

// kinds returns "kind name id content" for each event, the shape the tables
// compare.
type brief struct{ Kind, ToolName, CallID, Content string }

func briefs(events []Event) []brief {
	out := []brief{}
	for _, e := range events {
		out = append(out, brief{e.Kind, e.ToolName, e.CallID, e.Content})
	}
	return out
}

func TestParseClaude(t *testing.T) {
	const sid = "8f3c2a51-6d7e-4b0a-9c1d-2e5f7a9b0c11"
	tests := []struct {
		name string
		line string
		want []brief
	}{
		{"init", `{"type":"system","subtype":"init","session_id":"s","tools":["Bash","Read"],"model":"claude-sonnet-4-5"}`,
			[]brief{{KindSystem, "", "", `{"model":"claude-sonnet-4-5","tools":["Bash","Read"]}`}}},
		{"other system", `{"type":"system","subtype":"compact_boundary","session_id":"s"}`, []brief{}},
		{"partial", `{"type":"stream_event","event":{"type":"content_block_delta"},"session_id":"s"}`, []brief{}},
		{"text", `{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"hi"}]},"session_id":"s"}`,
			[]brief{{KindResponse, "", "", "hi"}}},
		{"thinking skipped", `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm"}]},"session_id":"s"}`, []brief{}},
		{"tool_use", `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{ "command": "ls" }}]},"session_id":"s"}`,
			[]brief{{KindToolCall, "Bash", "toolu_1", `{"command":"ls"}`}}},
		{"tool_result", `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a\nb"}]},"session_id":"s"}`,
			[]brief{{KindToolResult, "", "toolu_1", "a\nb"}}},
		{"tool_result blocks", `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":[{"type":"text","text":"x"}]}]},"session_id":"s"}`,
			[]brief{{KindToolResult, "", "toolu_1", "x"}}},
		{"tool_result error", `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"boom","is_error":true}]},"session_id":"s"}`,
			[]brief{{KindToolResultError, "", "toolu_1", "boom"}}},
		{"user text echo", `{"type":"user","message":{"role":"user","content":"do it"},"session_id":"s"}`, []brief{}},
		{"result", `{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"result":"done","session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":1}}`,
			[]brief{{KindResult, "", "", "done"}}},
		{"result error", `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s","errors":["No conversation found with session ID: x"]}`,
			[]brief{{KindResult, "", "", "No conversation found with session ID: x"}}},
		{"not json", `this is not json`, []brief{{KindUnknown, "", "", "this is not json"}}},
		{"no type", `{"foo":1}`, []brief{{KindUnknown, "", "", `{"foo":1}`}}},
		{"blank", `  `, []brief{}},
	}
	for _, tt := range tests {
		got := briefs(parseClaude([]byte(tt.line)))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: parseClaude(%s)\n got %+v\nwant %+v", tt.name, tt.line, got, tt.want)
		}
	}

	res := parseClaude([]byte(`{"type":"result","subtype":"success","duration_ms":15234,"result":"ok","session_id":"` + sid + `","total_cost_usd":0.0421,"usage":{"input_tokens":18,"cache_creation_input_tokens":1500,"cache_read_input_tokens":35700,"output_tokens":123}}`))
	want := Event{Kind: KindResult, SessionID: sid, Content: "ok", CostUSD: f64(0.0421), DurationMS: 15234,
		Usage: &instrument.Usage{InputTokens: 18 + 1500 + 35700, OutputTokens: 123, CacheReadTokens: 35700, CacheWriteTokens: 1500}}
	if len(res) != 1 || !reflect.DeepEqual(res[0], want) {
		t.Errorf("result line: got %+v, want %+v", res, want)
	}
}

func TestParseCodex(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []brief
	}{
		{"thread", []string{`{"type":"thread.started","thread_id":"th_1"}`, `{"type":"turn.started"}`},
			[]brief{{KindSession, "", "", ""}}},
		{"message and reasoning", []string{
			`{"type":"item.started","item":{"id":"item_0","type":"agent_message","text":""}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"think"}}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`},
			[]brief{{KindReasoning, "", "", "think"}, {KindResponse, "", "", "hi"}}},
		{"command", []string{
			`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
			`{"type":"item.updated","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a","exit_code":null,"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}`},
			[]brief{{KindToolCall, "command_execution", "item_1", `{"command":"ls"}`}, {KindToolResult, "command_execution", "item_1", "a\n"}}},
		{"command failed", []string{
			`{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}`},
			[]brief{{KindToolCall, "command_execution", "item_2", `{"command":"false"}`}, {KindToolResultError, "command_execution", "item_2", "\nexit code 1"}}},
		{"file change", []string{
			`{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"a.go","kind":"add"}],"status":"completed"}}`},
			[]brief{{KindToolCall, "file_change", "item_3", `{"changes":[{"path":"a.go","kind":"add"}]}`}, {KindToolResult, "file_change", "item_3", "completed"}}},
		{"mcp", []string{
			`{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[]},"error":null,"status":"completed"}}`},
			[]brief{{KindToolCall, "docs.search", "item_4", `{"q":"x"}`}, {KindToolResult, "docs.search", "item_4", `{"content":[]}`}}},
		{"mcp error", []string{
			`{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{},"result":null,"error":{"message":"down"},"status":"failed"}}`},
			[]brief{{KindToolCall, "docs.search", "item_5", `{}`}, {KindToolResultError, "docs.search", "item_5", "down"}}},
		{"web search", []string{`{"type":"item.completed","item":{"id":"item_6","type":"web_search","query":"go"}}`},
			[]brief{{KindToolCall, "web_search", "item_6", `{"query":"go"}`}, {KindToolResult, "web_search", "item_6", ""}}},
		{"todo", []string{`{"type":"item.updated","item":{"id":"item_7","type":"todo_list","items":[{"text":"a","completed":true}]}}`},
			[]brief{{KindTodoList, "", "", `[{"text":"a","completed":true}]`}}},
		{"usage", []string{`{"type":"turn.completed","usage":{"input_tokens":3,"cached_input_tokens":2,"output_tokens":1}}`},
			[]brief{{KindResult, "", "", ""}}},
		{"failures", []string{`{"type":"turn.failed","error":{"message":"stream disconnected"}}`, `{"type":"error","message":"No active session"}`},
			[]brief{{KindError, "", "", "stream disconnected"}, {KindError, "", "", "No active session"}}},
		{"garbage", []string{`{"type":"x.y"}`, `nope`},
			[]brief{{KindUnknown, "", "", `{"type":"x.y"}`}, {KindUnknown, "", "", "nope"}}},
	}
	for _, tt := range tests {
		p := newCodexParser()
		var events []Event
		for _, l := range tt.lines {
			events = append(events, p.line([]byte(l))...)
		}
		if got := briefs(events); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: lines %q\n got %+v\nwant %+v", tt.name, tt.lines, got, tt.want)
		}
	}

	u := newCodexParser().line([]byte(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}`))
	want := &instrument.Usage{InputTokens: 24763, CacheReadTokens: 24448, OutputTokens: 122}
	if !reflect.DeepEqual(u[0].Usage, want) {
		t.Errorf("usage: got %+v, want %+v", u[0].Usage, want)
	}
}

// The recorded transcripts parse without unknown lines except the one
// deliberately broken line of the Claude transcript.
func TestTranscripts(t *testing.T) {
	for _, tt := range []struct {
		file    string
		parse   func([]byte) []Event
		unknown int
	}{
		{"testdata/claude.jsonl", parseClaude, 1},
		{"testdata/codex.jsonl", newCodexParser().line, 0},
	} {
		f, err := os.Open(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			for _, e := range tt.parse(sc.Bytes()) {
				if e.Kind == KindUnknown {
					n++
				}
			}
		}
		f.Close()
		if n != tt.unknown {
			t.Errorf("%s: %d unknown lines, want %d", tt.file, n, tt.unknown)
		}
	}
}

func TestPromptFromArgs(t *testing.T) {
	tests := []struct {
		args []string
		f    Format
		want string
	}{
		{[]string{"claude", "-p", "fix it", "--output-format", "stream-json", "--verbose"}, FormatClaude, "fix it"},
		{[]string{"claude", "--resume", "abc", "-p", "--model", "opus", "go on"}, FormatClaude, "go on"},
		{[]string{"codex", "exec", "--json", "-m", "gpt-5", "fix it"}, FormatCodex, "fix it"},
		{[]string{"codex", "exec", "--json", "resume", "th_1", "continue"}, FormatCodex, "continue"},
		{[]string{"codex", "exec", "--json", "-"}, FormatCodex, ""},
		{[]string{"echo", "hello", "world"}, FormatAuto, "hello world"},
		// Claude's list flags take every value up to the next flag.
		{[]string{"claude", "-p", "the prompt", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "Read"}, FormatClaude, "the prompt"},
		{[]string{"claude", "--allowedTools", "Bash", "Read", "--add-dir", "/a", "/b", "-p", "the prompt"}, FormatClaude, "the prompt"},
		{[]string{"claude", "-c", "-p", "go on", "--mcp-config", "a.json", "b.json"}, FormatClaude, "go on"},
		{[]string{"claude", "-p", "--allowedTools=Bash", "the prompt", "--verbose"}, FormatAuto, "the prompt"},
		{[]string{"codex", "exec", "-p", "work", "-s", "danger-full-access", "fix it"}, FormatCodex, "fix it"},
		{[]string{"codex", "exec", "-s", "danger-full-access", "resume", "th_1", "continue"}, FormatCodex, "continue"},
	}
	for _, tt := range tests {
		if got := promptFromArgs(tt.args, tt.f); got != tt.want {
			t.Errorf("promptFromArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestResumeInvalid(t *testing.T) {
	for _, tt := range []struct {
		f    Format
		text string
		want bool
	}{
		{FormatClaude, "Error: Invalid session ID. Must be a valid UUID.", true},
		{FormatClaude, "Could not resume session abc", true},
		{FormatCodex, "thread not found: th_1", true},
		{FormatCodex, "No active session", true},
		{FormatCodex, "Error: thread/resume: thread/resume failed: no rollout found for thread id 0199ffff-0000-7000-8000-00000000dead (code -32600)", true}, // what @openai/codex 0.169.0 says (internal/agentcheck)
		{FormatCodex, "rate limited", false},
	} {
		if got := resumeInvalid(tt.f, tt.text); got != tt.want {
			t.Errorf("resumeInvalid(%s, %q) = %v, want %v", tt.f, tt.text, got, tt.want)
		}
	}
}
