package mapping

import "github.com/convtrace/convtrace/schema"

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
	setText(&ask, run.arguments)
	if !s.Ended {
		return []schema.Turn{ask}
	}
	return []schema.Turn{ask, c.finish(s, schema.RoleToolResult, 1, func(t *schema.Turn) { setText(t, run.result) })}
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
