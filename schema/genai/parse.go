package genai

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Parse reads a JSON array of messages, in the stored shape (role, parts)
// or in the shapes sources record: Chat Completions (role, content,
// tool_calls, tool_call_id), Anthropic Messages content blocks and the
// Vercel AI SDK's parts. ok is false when s is not a JSON array.
func Parse(s string) ([]Message, bool) {
	if ms, ok := parseTextMessages(s); ok {
		return ms, true
	}
	return parseAny(s)
}

// parseAny is Parse's general path, for every shape.
func parseAny(s string) ([]Message, bool) {
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raws); err != nil {
		return nil, false
	}
	ms := make([]Message, 0, len(raws))
	for _, r := range raws {
		if r == nil {
			continue
		}
		ms = append(ms, FromJSON(r, ""))
	}
	return ms, true
}

// Decode reads the messages at the start of content, an array of messages
// or one message, stopping at the first that does not decode or names no
// role (as in a prefix cut mid-message). complete says all of content was
// messages: anything else is text, shown as written.
func Decode(content string) (ms []Message, complete bool) {
	ms, _, complete = DecodePrefix(content)
	return ms, complete
}

// DecodePrefix is Decode that also returns the rest of content after the
// messages it read: the start of the message a prefix cut short.
func DecodePrefix(content string) (ms []Message, rest string, complete bool) {
	s := strings.TrimSpace(content)
	if s == "" || (s[0] != '[' && s[0] != '{') {
		return nil, content, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	read := int64(0) // the end of the last message read
	next := func() bool {
		var r map[string]json.RawMessage
		if dec.Decode(&r) != nil || String(r["role"]) == "" {
			return false
		}
		ms = append(ms, FromJSON(r, ""))
		read = dec.InputOffset()
		return true
	}
	if s[0] == '{' {
		if !next() {
			return nil, content, false
		}
	} else {
		if _, err := dec.Token(); err != nil { // [
			return nil, content, false
		}
		read = dec.InputOffset()
		for dec.More() {
			if !next() {
				return ms, strings.TrimLeft(s[read:], ", \t\r\n"), false
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return ms, strings.TrimLeft(s[read:], ", \t\r\n"), false
		}
	}
	_, err := dec.Token()
	if err == io.EOF && len(ms) > 0 {
		return ms, "", true
	}
	return ms, s[read:], false
}

// FromJSON reads one message object of any source shape; role is the
// default when it names none.
func FromJSON(r map[string]json.RawMessage, role string) Message {
	m := Message{Role: String(r["role"]), FinishReason: String(r["finish_reason"])}
	if m.Role == "" {
		m.Role = role
	}
	if parts, ok := r["parts"]; ok {
		m.Parts = PartsFromJSON(parts)
		return m
	}
	if m.Role == "tool" && !holdsToolResults(r["content"]) {
		// A tool result: its content answers the call it names.
		id := firstString(r, "tool_call_id", "id")
		m.Parts = []Part{{Type: PartToolResponse, ID: id, Response: toolResponse(r["content"])}}
		return m
	}
	m.Parts = PartsFromJSON(r["content"])
	var calls []map[string]json.RawMessage
	_ = json.Unmarshal(r["tool_calls"], &calls)
	for _, c := range calls {
		m.Parts = append(m.Parts, toolCallFromJSON(c))
	}
	return m
}

// toolCallFromJSON reads a Chat Completions tool call
// {"id", "type": "function", "function": {"name", "arguments"}}, or a flat
// {"id", "name", "arguments"}.
func toolCallFromJSON(c map[string]json.RawMessage) Part {
	fn := c
	var inner map[string]json.RawMessage
	if json.Unmarshal(c["function"], &inner) == nil && inner != nil {
		fn = inner
	}
	return Part{Type: PartToolCall, ID: String(c["id"]), Name: String(fn["name"]), Arguments: Arguments(fn["arguments"])}
}

// PartsFromJSON reads message content: a string, or an array of parts in
// the stored shape, the Chat Completions shape ({"type":"text","text"}),
// the Anthropic shape (tool_use, tool_result, thinking) or the Vercel AI
// SDK's (tool-call, tool-result).
func PartsFromJSON(raw json.RawMessage) []Part {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '"':
		return TextOrParts(String(raw))
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		parts := make([]Part, 0, len(items))
		for _, it := range items {
			parts = append(parts, partFromJSON(it)...)
		}
		return parts
	}
	return []Part{Text(string(Canonical(raw)))}
}

func partFromJSON(raw json.RawMessage) []Part {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil || r == nil {
		return PartsFromJSON(raw) // a bare string item
	}
	switch typ := String(r["type"]); typ {
	case PartText, PartReasoning:
		return []Part{{Type: typ, Content: firstString(r, "content", "text", "reasoning")}}
	case "thinking":
		return []Part{{Type: PartReasoning, Content: String(r["thinking"])}}
	case PartToolCall:
		return []Part{{Type: PartToolCall, ID: String(r["id"]), Name: String(r["name"]), Arguments: Arguments(r["arguments"])}}
	case "tool_use":
		return []Part{{Type: PartToolCall, ID: String(r["id"]), Name: String(r["name"]), Arguments: Arguments(r["input"])}}
	case PartToolResponse:
		resp := r["response"]
		if resp == nil {
			resp = r["result"]
		}
		return []Part{{Type: PartToolResponse, ID: String(r["id"]), Response: toolResponse(resp)}}
	case "tool_result":
		return []Part{{Type: PartToolResponse, ID: String(r["tool_use_id"]), Response: toolResponse(r["content"])}}
	case "tool-call": // the Vercel AI SDK's
		return []Part{{Type: PartToolCall, ID: String(r["toolCallId"]), Name: String(r["toolName"]), Arguments: Arguments(firstRaw(r, "args", "input"))}}
	case "tool-result":
		return []Part{{Type: PartToolResponse, ID: String(r["toolCallId"]), Response: toolResponse(firstRaw(r, "result", "output"))}}
	case "":
		return []Part{Text(string(Canonical(raw)))}
	default:
		return []Part{{Type: typ, Raw: Canonical(raw)}}
	}
}

// TextOrParts reads content recorded as a string: the text itself, or a
// JSON array of typed content parts that multimodal messages are
// serialized to.
func TextOrParts(s string) []Part {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
		var items []map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &items) == nil && len(items) > 0 {
			typed := true
			for _, it := range items {
				typed = typed && String(it["type"]) != ""
			}
			if typed {
				return PartsFromJSON(json.RawMessage(t))
			}
		}
	}
	if s == "" {
		return nil
	}
	return []Part{Text(s)}
}

// Arguments normalizes tool call arguments given as a JSON value: a string
// holding JSON becomes that JSON.
func Arguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return jsonOrString(String(raw))
	}
	return Canonical(raw)
}

// toolResponse normalizes a tool result given as a JSON value. A result
// recorded as content parts becomes its text.
func toolResponse(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '{' {
		// The AI SDK (5 on) types a tool's output: {"type": "text" or
		// "json" (or error-…), "value": ...}.
		var out struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal(raw, &out) == nil && len(out.Value) > 0 {
			switch out.Type {
			case "text", "json", "error-text", "error-json":
				return Canonical(out.Value)
			}
		}
	}
	if raw[0] == '[' {
		var texts []string
		for _, p := range PartsFromJSON(raw) {
			if p.Type != PartText {
				return Canonical(raw)
			}
			texts = append(texts, p.Content)
		}
		return Marshal(strings.Join(texts, "\n"))
	}
	return Canonical(raw)
}

// holdsToolResults says whether content is an array of the Vercel AI SDK's
// tool-result parts, each naming the call it answers.
func holdsToolResults(content json.RawMessage) bool {
	var items []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &items) != nil || len(items) == 0 {
		return false
	}
	for _, it := range items {
		if it.Type != "tool-result" {
			return false
		}
	}
	return true
}
