package collector

import "github.com/convtrace/convtrace/schema"

// mapConvtrace maps the spans package instrument writes: a gen_ai.prompt
// event when the call starts and a gen_ai.response event when it ends. A
// chat call yields prompt and response turns, a tool execution tool_call and
// tool_result turns; a failed one yields its prompt and an error turn.
func mapConvtrace(s span, c call) []schema.Turn {
	prompt, ok := s.event(schema.EventPrompt)
	if !ok {
		return nil
	}
	askRole, answerRole := schema.RolePrompt, schema.RoleResponse
	if c.operation == schema.OperationExecuteTool {
		askRole, answerRole = schema.RoleToolCall, schema.RoleToolResult
	}
	ask := c.base(s)
	ask.Role, ask.Seq = askRole, 0
	ask.TurnID = schema.TurnID(s.spanID, askRole, 0)
	ask.StartNS = prompt.timeNS
	setContent(&ask, prompt.attrs)
	if !s.ended {
		return []schema.Turn{ask}
	}

	answer := c.base(s)
	answer.Seq = 1
	answer.StartNS = s.endNS
	answer.DurationNS = s.durationNS()
	answer.Attributes = s.extraAttrs()
	if s.failed {
		answer.Role = schema.RoleError
		answer.Status = schema.StatusError
		answer.Error = s.errorMessage()
		answer.Content = answer.Error
		answer.ContentBytes = uint32(len(answer.Content))
	} else {
		answer.Role = answerRole
		if resp, ok := s.event(schema.EventResponse); ok {
			setContent(&answer, resp.attrs)
		}
		answer.TokensIn, answer.TokensOut = c.tokensIn, c.tokensOut
		answer.TokensCacheRead, answer.TokensCacheWrite = c.tokensCacheRead, c.tokensCacheWrite
		answer.TokensReasoning, answer.CostUSD = c.tokensReasoning, c.costUSD
	}
	answer.TurnID = schema.TurnID(s.spanID, answer.Role, 1)
	return []schema.Turn{ask, answer}
}

func setContent(t *schema.Turn, a attrs) {
	t.Content = a.str(schema.KeyContent)
	t.Truncated = a.bool(schema.KeyContentTruncated)
	if n := a.uint32(schema.KeyContentBytes); n != nil {
		t.ContentBytes = *n
	} else {
		t.ContentBytes = uint32(len(t.Content))
	}
}

// event returns the span's first event named name.
func (s span) event(name string) (event, bool) {
	for _, e := range s.events {
		if e.name == name {
			return e, true
		}
	}
	return event{}, false
}
