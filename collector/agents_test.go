package collector

import (
	"strconv"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
)

// Without OTEL_LOG_RAW_API_BODIES Claude Code logs no request or response
// body: a call's prompt is then the user's prompt and the tool results of
// the prompt so far, its answer the answer text and the tool calls. The
// recorded session is mapped with its body records left out.
func TestClaudeCodeWithoutRawBodies(t *testing.T) {
	_, logs := readFixture(t, "testdata/recorded/agents/claude-code/session")
	var kept []mapping.LogRecord
	for _, l := range logs {
		name, mapped := mapping.AgentEvent(l)
		if mapped && name != "claude_code.api_request_body" && name != "claude_code.api_response_body" {
			kept = append(kept, l)
		}
	}
	traceID, spanID, ok := mapping.AgentKey(kept[0], "claude_code.user_prompt")
	if !ok {
		t.Fatal("the recorded records have no agent key")
	}
	s := mapping.SpanFromLogs(kept)
	s.TraceID, s.SpanID = traceID, spanID
	var got []string
	for _, turn := range mapping.Turns(s) {
		line := turn.Role + "|" + turn.ToolName + "|" + turn.Content
		if turn.CostSource != "" || turn.CostUSD != nil {
			line += "|" + fmtCount(turn.TokensIn) + "/" + fmtCount(turn.TokensOut)
		}
		got = append(got, line)
	}
	want := []string{
		`prompt||[{"role":"user","parts":[{"type":"text","content":"say hello using the shell"}]}]`,
		`response|Bash|[{"role":"assistant","parts":[{"type":"tool_call","id":"toolu_fake3eb517e6_0001","name":"Bash","arguments":{"command":"echo hello","description":"Print hello"}}]}]|1600/40`,
		`prompt||[{"role":"user","parts":[{"type":"text","content":"say hello using the shell"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"toolu_fake3eb517e6_0001","name":"Bash","arguments":{"command":"echo hello","description":"Print hello"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"toolu_fake3eb517e6_0001","response":""}]}]`,
		`response||done: hello|2300/25`,
		`tool_call|Bash|{"command":"echo hello","description":"Print hello"}`,
		`tool_result|Bash|`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("turns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, turn := range mapping.Turns(s) {
		if turn.ThreadID != kept[0].Attrs.Str("session.id") {
			t.Errorf("%s turn in thread %q, want the session", turn.Role, turn.ThreadID)
		}
		if turn.Role == schema.RoleResponse && (turn.CostUSD == nil || *turn.CostUSD <= 0) {
			t.Errorf("response without Claude Code's cost_usd: %+v", turn.CostUSD)
		}
	}
}

func fmtCount(n *uint32) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatUint(uint64(*n), 10)
}

// TestAgentRecordedByRun: every record of an agent whose resource says a
// convtrace run records it is taken, none mapped, and its tool spans give
// no tool output.
func TestAgentRecordedByRun(t *testing.T) {
	spans, logs := readFixture(t, "testdata/recorded/agents/claude-code/session")
	mark := schema.Attr{Key: schema.KeyRecordedBy, Value: "convtrace-run"}
	var mapped int
	for _, l := range logs {
		if _, ok := mapping.AgentEvent(l); ok {
			mapped++
		}
		l.Resource.List = append(l.Resource.List[:len(l.Resource.List):len(l.Resource.List)], mark)
		if name, ok := mapping.AgentEvent(l); name == "" || ok {
			t.Errorf("%s of a run's agent: mapped %v", name, ok)
		}
	}
	var outputs int
	for _, s := range spans {
		if _, _, ok := mapping.ClaudeToolOutput(s); ok {
			outputs++
		}
		s.Resource.List = append(s.Resource.List[:len(s.Resource.List):len(s.Resource.List)], mark)
		if _, _, ok := mapping.ClaudeToolOutput(s); ok {
			t.Errorf("a run's agent's span %q gives a tool output", s.Name)
		}
	}
	if mapped == 0 || outputs == 0 {
		t.Fatalf("the fixture has %d mapped records and %d tool outputs: the check proves nothing", mapped, outputs)
	}
}
