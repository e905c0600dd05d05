package mapping

import (
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// Tool executions become a tool_call turn (the arguments) and a
// tool_result turn (the result), carrying the tool's name and call id, so
// they pair by call id with the assistant's tool call that asked for them.
// OTel GenAI marks them with gen_ai.operation.name execute_tool; the
// OpenInference and OpenLLMetry forms are read in their own files.

// toolRun is what a tool execution span recorded.
type toolRun struct {
	name, callID      string
	arguments, result string
}

// toolTurns returns the tool_call turn and the tool_result (or error) turn
// of a tool execution, carrying the tool's name and call id so they pair
// with the assistant's tool call.
func toolTurns(s Span, c call, run toolRun) []schema.Turn {
	c.operation = schema.OperationExecuteTool
	if run.name != "" {
		c.toolName = run.name
	}
	if run.callID != "" {
		c.toolCallID = run.callID
	}
	ask := c.base(s)
	ask.Role, ask.Seq = schema.RoleToolCall, 0
	ask.TurnID = schema.TurnID(s.SpanID, ask.Role, 0)
	ask.StartNS = s.StartNS
	setText(&ask, toolText(run.arguments))
	if !s.Ended {
		return []schema.Turn{ask}
	}
	return []schema.Turn{ask, c.finish(s, schema.RoleToolResult, 1, func(t schema.Turn) schema.Turn {
		setText(&t, toolText(run.result))
		return t
	})}
}

// genAITool reads an OTel GenAI execute_tool span.
func genAITool(s Span) (toolRun, bool) {
	a := s.Attrs
	if a.Str(schema.KeyOperationName) != schema.OperationExecuteTool {
		return toolRun{}, false
	}
	return toolRun{
		arguments: a.Str(schema.KeyToolCallArguments),
		result:    a.Str(schema.KeyToolCallResult),
	}, true
}

var _ = keys(schema.KeyToolCallArguments, schema.KeyToolCallResult)

// toolText is a tool's arguments or result as the tool had them, out of
// the wrappers instrumentations put around them (a JSON string, Traceloop's
// args and kwargs, a serialized LangChain message: docs/design/mapping.md).
func toolText(v string) string {
	t := strings.TrimSpace(v)
	if t == "" || (t[0] != '"' && t[0] != '{') {
		return v
	}
	var str string
	if t[0] == '"' {
		if json.Unmarshal([]byte(t), &str) == nil {
			return str
		}
		return v
	}
	var w struct {
		Args   []json.RawMessage `json:"args"`
		Kwargs json.RawMessage   `json:"kwargs"`
		LC     int               `json:"lc"`
		Type   string            `json:"type"`
		Output json.RawMessage   `json:"output"`
	}
	if json.Unmarshal([]byte(t), &w) != nil {
		return v
	}
	switch {
	case w.LC > 0 && w.Type == "constructor":
		var k struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(w.Kwargs, &k) == nil && len(k.Content) > 0 {
			return toolText(string(k.Content))
		}
	case len(w.Output) > 0 && strings.Contains(string(w.Output), `"lc"`):
		if out := toolText(string(w.Output)); out != string(w.Output) {
			return out
		}
	case w.Args != nil && len(w.Args) == 0 && len(w.Kwargs) > 0 && w.LC == 0:
		return string(w.Kwargs)
	}
	return v
}
