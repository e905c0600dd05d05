package mapping

import (
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// mapConvtrace maps the spans package instrument writes: a gen_ai.prompt
// event when the call starts and a gen_ai.response event when it ends. A
// chat call yields prompt and response turns, a tool execution tool_call and
// tool_result turns; a failed one yields its prompt and an error turn.
func mapConvtrace(s Span, c call, prompt Event) []schema.Turn {
	askRole, answerRole := schema.RolePrompt, schema.RoleResponse
	if c.operation == schema.OperationExecuteTool {
		askRole, answerRole = schema.RoleToolCall, schema.RoleToolResult
	}
	ask := c.base(s)
	ask.Role, ask.Seq = askRole, 0
	ask.TurnID = schema.TurnID(s.SpanID, askRole, 0)
	ask.StartNS = prompt.TimeNS
	setContent(&ask, prompt.Attrs)
	if askRole == schema.RolePrompt {
		ask.Content = normalizedPrompt(ask.Content, ask.Truncated)
	}
	var turns []schema.Turn
	if !prompt.Attrs.bool(schema.KeyRecordedElsewhere) {
		turns = append(make([]schema.Turn, 0, 2), ask) // room for the answer
	}
	turns = append(turns, c.between(s)...)
	if !s.Ended {
		return turns
	}
	if resp, ok := s.event(schema.EventResponse); ok && resp.Attrs.bool(schema.KeyRecordedElsewhere) && !s.Failed && len(turns) > 0 && turns[0].Seq == 0 {
		// The answer is the run's last call's: the prompt says the run
		// ended, and how long it took.
		turns[0].DurationNS = s.durationNS()
		return turns
	}
	seq := len(turns) // after the prompt, seq 0, and the turns between
	if len(turns) == 0 || turns[0].Seq != 0 {
		seq++ // the turns between, without the prompt
	}
	answer := c.finish(s, answerRole, uint16(seq), func(t schema.Turn) schema.Turn {
		if resp, ok := s.event(schema.EventResponse); ok {
			setContent(&t, resp.Attrs)
		}
		if answerRole == schema.RoleResponse && t.ToolCallID == "" && strings.HasPrefix(t.Content, "[") {
			if ms, ok := genai.Parse(t.Content); ok {
				if calls := genai.ToolCalls(ms); len(calls) == 1 {
					t.ToolName, t.ToolCallID = calls[0].Name, calls[0].ID
				}
			}
		}
		return t
	})
	return append(turns, answer)
}

// between returns the turns of the span's convtrace.turn events, said
// between its prompt (seq 0) and its answer, numbered from 1 in time order.
func (c call) between(s Span) []schema.Turn {
	var turns []schema.Turn
	for _, e := range s.Events {
		if e.Name != schema.EventTurn {
			continue
		}
		t := c.base(s)
		t.Role = e.Attrs.Str(schema.KeyRole)
		t.Seq = uint16(len(turns) + 1)
		t.TurnID = schema.TurnID(s.SpanID, t.Role, t.Seq)
		t.StartNS = e.TimeNS
		setContent(&t, e.Attrs)
		if code := e.Attrs.Str(schema.KeyCode); code != "" {
			t.Attributes = []schema.Attr{{Key: schema.KeyCode, Value: code}}
		}
		if rejected := e.Attrs.Str(schema.KeyRejectedSession); rejected != "" {
			t.Attributes = append(t.Attributes, schema.Attr{Key: schema.KeyRejectedSession, Value: rejected})
		}
		if agent := e.Attrs.Str(schema.KeyAgent); agent != "" {
			t.Agent = agent // a sub-agent's, on its parent's span
		}
		if t.Role == schema.RoleError {
			t.Status = schema.StatusError
			t.Error = t.Content
		}
		turns = append(turns, t)
	}
	return turns
}

// convtracePrompt returns the prompt event package instrument wrote.
// Other instrumentations may name an event gen_ai.prompt too, so the event
// must also carry the content size instrument always records.
func (s Span) convtracePrompt() (Event, bool) {
	e, ok := s.event(schema.EventPrompt)
	if !ok {
		return Event{}, false
	}
	if _, ok := e.Attrs.Get(schema.KeyContentBytes, schema.KeyContent); !ok {
		return Event{}, false
	}
	return e, true
}

// normalizedPrompt stores a prompt given as chat messages JSON (OpenAI's
// shape, say) in the one messages shape every convention's prompts share;
// text, and content cut at the cap, stay as they are.
func normalizedPrompt(content string, truncated bool) string {
	if truncated || !strings.HasPrefix(strings.TrimSpace(content), "[") {
		return content
	}
	if ms, ok := genai.Parse(content); ok && len(ms) > 0 {
		return genai.Render(ms)
	}
	return content
}

func setContent(t *schema.Turn, a Attrs) {
	t.Content = a.Str(schema.KeyContent)
	t.Truncated = a.bool(schema.KeyContentTruncated)
	if n, _ := a.uint32(schema.KeyContentBytes); n != nil {
		t.ContentBytes = *n
	} else {
		t.ContentBytes = uint32(len(t.Content))
	}
}

// event returns the span's first event named name.
func (s Span) event(name string) (Event, bool) {
	for _, e := range s.Events {
		if e.Name == name {
			return e, true
		}
	}
	return Event{}, false
}
