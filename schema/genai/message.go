package genai

import (
	"encoding/json"
	"strings"
)

// Message is one chat message in the stored shape.
type Message struct {
	Role         string `json:"role"`
	Parts        []Part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// Part types of the stored shape.
const (
	PartText         = "text"
	PartReasoning    = "reasoning"
	PartToolCall     = "tool_call"
	PartToolResponse = "tool_call_response"
)

// Part is one part of a message. Parts of other types (blob, uri, file…)
// are kept as sent, in Raw.
type Part struct {
	Type      string
	Content   string          // text, reasoning
	ID        string          // tool_call, tool_call_response
	Name      string          // tool_call
	Arguments json.RawMessage // tool_call
	Response  json.RawMessage // tool_call_response
	Raw       json.RawMessage // any other type
}

// MarshalJSON writes the part in the stored shape.
func (p Part) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PartText, PartReasoning:
		return Marshal(struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}{p.Type, p.Content}), nil
	case PartToolCall:
		return Marshal(struct {
			Type      string          `json:"type"`
			ID        string          `json:"id,omitempty"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments,omitempty"`
		}{p.Type, p.ID, p.Name, p.Arguments}), nil
	case PartToolResponse:
		resp := p.Response
		if resp == nil {
			resp = json.RawMessage("null")
		}
		return Marshal(struct {
			Type     string          `json:"type"`
			ID       string          `json:"id,omitempty"`
			Response json.RawMessage `json:"response"`
		}{p.Type, p.ID, resp}), nil
	}
	if p.Raw == nil {
		return Marshal(struct {
			Type string `json:"type"`
		}{p.Type}), nil
	}
	return p.Raw, nil
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: PartText, Content: s} }

// ToolCall returns a tool call whose arguments are JSON text or, when they
// are not JSON (such as arguments cut short by a broken stream), a plain
// string.
func ToolCall(id, name, arguments string) Part {
	p := Part{Type: PartToolCall, ID: id, Name: name}
	if arguments != "" {
		p.Arguments = jsonOrString(arguments)
	}
	return p
}

// ToolResponse returns a tool result given as text.
func ToolResponse(id, response string) Part {
	return Part{Type: PartToolResponse, ID: id, Response: Marshal(response)}
}

// Render returns the stored JSON of ms, "" for none.
func Render(ms []Message) string {
	if len(ms) == 0 {
		return ""
	}
	if b, ok := appendTextMessages(nil, ms); ok {
		return string(b)
	}
	return renderAny(ms)
}

// renderAny is Render's general path, for every part type.
func renderAny(ms []Message) string {
	for i := range ms {
		if ms[i].Parts == nil {
			ms[i].Parts = []Part{}
		}
	}
	return string(Marshal(ms))
}

// PlainText returns the text of output that is one message of text parts
// only, the common answer of a chat call.
func PlainText(ms []Message) (string, bool) {
	if len(ms) != 1 {
		return "", false
	}
	texts := make([]string, 0, len(ms[0].Parts))
	for _, p := range ms[0].Parts {
		if p.Type != PartText {
			return "", false
		}
		texts = append(texts, p.Content)
	}
	return strings.Join(texts, "\n"), true
}

// ToolCalls returns the tool call parts of ms.
func ToolCalls(ms []Message) []Part {
	var calls []Part
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.Type == PartToolCall {
				calls = append(calls, p)
			}
		}
	}
	return calls
}

// Text is what a page shows of m, one line per part: what was said (text
// and reasoning), a tool call as "→ name(arguments)" and a tool result as
// "← result". Parts of other types (images, files) show nothing.
func (m Message) Text() string { return m.lines(true) }

// Said is the text of m without its tool calls and tool results: what was
// said, as recent context passes it on.
func (m Message) Said() string { return m.lines(false) }

func (m Message) lines(tools bool) string {
	var lines []string
	for _, p := range m.Parts {
		switch p.Type {
		case PartText, PartReasoning:
			if p.Content != "" {
				lines = append(lines, p.Content)
			}
		case PartToolCall:
			if tools {
				lines = append(lines, "→ "+p.Name+"("+String(p.Arguments)+")")
			}
		case PartToolResponse:
			if tools {
				lines = append(lines, "← "+String(p.Response))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// CallID is the id of the tool call a tool message answers, "" when m is
// no tool result.
func (m Message) CallID() string {
	if m.Role != "tool" {
		return ""
	}
	for _, p := range m.Parts {
		if p.Type == PartToolResponse {
			return p.ID
		}
	}
	return ""
}
