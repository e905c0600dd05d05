package cliagent

import (
	"cmp"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// providerCall is one provider call of a run, as Claude Code's stream-json
// tells it (one API message): a chat span of its own under the run's span,
// or under the Task tool of the sub-agent that made it. Its answer is its
// text and tool uses; its tool uses start as tool spans once it has ended,
// so they follow the answer that asked for them.
type providerCall struct {
	call     *instrument.ActiveCall
	main     bool // the main agent's, not a sub-agent's
	model    string
	usage    *instrument.Usage
	outKnown bool // the output tokens were told (message_delta)
	parts    []genai.Part
	tools    []Event
}

// callOf returns the open call e belongs to, starting it when e is the
// first event of its message.
func (r *run) callOf(e Event) *providerCall {
	if c, ok := r.calls[e.MessageID]; ok {
		return c
	}
	start := r.lastLine
	if e.Kind == KindCallStart && e.DurationMS > 0 {
		start = time.Now().Add(-time.Duration(e.DurationMS) * time.Millisecond)
	}
	parent := r.ctx
	if task, ok := r.tools[e.ParentToolUseID]; ok && e.ParentToolUseID != "" {
		parent = task.ctx
	}
	if e.Agent != "" {
		parent = instrument.WithAgent(parent, e.Agent)
	}
	_, ac := r.rec.Start(parent, instrument.Turn{Operation: schema.OperationChat, Provider: provider(FormatClaude),
		Model: e.Model, SessionID: r.session, Continues: true, Start: start})
	attrs := []attribute.KeyValue{attribute.String(schema.KeyResponseID, e.MessageID)}
	if e.RequestID != "" {
		attrs = append(attrs, attribute.String(schema.KeyProviderRequestID, e.RequestID))
	}
	ac.Span().SetAttributes(attrs...)
	if e.Kind == KindCallStart && e.DurationMS > 0 {
		ac.FirstToken(time.Now())
	}
	c := &providerCall{call: ac, main: e.ParentToolUseID == "", model: e.Model}
	r.calls[e.MessageID] = c
	r.order = append(r.order, e.MessageID)
	r.ncalls++
	return c
}

// onCall handles an event of a provider call; false when e is none (it
// names no message).
func (r *run) onCall(e Event) bool {
	if e.MessageID == "" {
		return false
	}
	if e.Kind == KindCallEnd {
		if _, ok := r.calls[e.MessageID]; ok {
			r.endCall(e.MessageID)
		}
		return true
	}
	c := r.callOf(e)
	c.model = cmp.Or(e.Model, c.model)
	if e.Usage != nil && e.Kind != KindCallUsage && c.usage == nil {
		u := *e.Usage
		c.usage = &u
	}
	switch e.Kind {
	case KindCallUsage:
		if e.Usage != nil {
			if c.usage == nil {
				c.usage = &instrument.Usage{}
			}
			c.usage.OutputTokens, c.outKnown = e.Usage.OutputTokens, true
		}
	case KindResponse:
		c.parts = append(c.parts, genai.Text(e.Content))
		if c.main {
			r.lastText = e.Content
		}
	case KindToolCall:
		c.parts = append(c.parts, genai.ToolCall(e.CallID, e.ToolName, e.Content))
		if name := subagentName(e); name != "" {
			r.agents[e.CallID] = name
		}
		c.tools = append(c.tools, e)
	}
	return true
}

// endCall ends the open call of message id with its answer, then starts
// its tool uses.
func (r *run) endCall(id string) {
	c := r.calls[id]
	delete(r.calls, id)
	resp := instrument.Response{Model: c.model}
	if len(c.parts) == 1 && c.parts[0].Type == genai.PartText {
		resp.Content = c.parts[0].Content
	} else if len(c.parts) > 0 {
		resp.Content = genai.Render([]genai.Message{{Role: "assistant", Parts: c.parts}})
	}
	if c.usage != nil {
		u := *c.usage
		resp.Usage = &u
	}
	if c.outKnown {
		r.outKnown += resp.Usage.OutputTokens
	} else {
		// Claude Code told only how the answer began (no
		// message_delta): the output is the run's (see finish).
		r.outUnknown++
	}
	c.call.End(resp, nil)
	for _, t := range c.tools {
		r.startTool(t)
	}
}

// endCalls ends every open call but those of message keep (a message
// whose events are still coming), oldest first: an event that is not part
// of a message ends the ones before it when Claude Code sends no
// message_stop (without --include-partial-messages).
func (r *run) endCalls(keep string) {
	order := r.order[:0]
	for _, id := range r.order {
		if _, open := r.calls[id]; !open {
			continue
		}
		if id == keep {
			order = append(order, id)
			continue
		}
		r.endCall(id)
	}
	r.order = order
}

// callsTotal completes the answer of a run whose provider calls are their
// own spans: they carry the usage, so the run carries none, and its answer
// is the last call's text (AnswerInCalls) unless it says something else.
// When some calls did not tell their output tokens, the run's total output
// less what the calls told is the run's own.
func (r *run) callsTotal(resp *instrument.Response, failed bool) {
	resp.Content = cmp.Or(resp.Content, r.lastText)
	resp.Usage, resp.CostUSD = nil, nil
	if res := r.result; res != nil && res.Usage != nil && r.outUnknown > 0 {
		if rest := res.Usage.OutputTokens - r.outKnown; rest > 0 {
			resp.Usage = &instrument.Usage{OutputTokens: rest}
		}
	}
	resp.AnswerInCalls = !failed && resp.Usage == nil && resp.Content == r.lastText
}
