package viewer

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// message is one chat message of a turn whose content is messages JSON, as
// a page shows it: who said it and its text. Said is the text without the
// tool calls and tool results that Text shows as → and ← lines: what the
// recent-context API passes on.
type message struct {
	Role string
	Text string
	Said string
}

// wireMessage reads the two shapes of chat messages that instrumentation
// stores as content: OpenAI's ({"role", "content": string or text parts,
// "tool_calls"}) and OpenTelemetry GenAI's ({"role", "parts": [...]}).
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Parts      []wirePart      `json:"parts"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wirePart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`      // OpenAI text part
	Content   json.RawMessage `json:"content"`   // GenAI text or reasoning part
	Name      string          `json:"name"`      // GenAI tool_call
	Arguments json.RawMessage `json:"arguments"` // GenAI tool_call
	Response  json.RawMessage `json:"response"`  // GenAI tool_call_response
}

type wireToolCall struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parseMessages reads content that is a JSON array of chat messages, or one
// message. ok is false unless all of content is such JSON: anything else is
// shown as written.
func parseMessages(content string) (msgs []message, ok bool) {
	msgs, complete := decodeMessages(content)
	return msgs, complete && len(msgs) > 0
}

// decodeMessages decodes the messages at the start of content, stopping at
// the first that does not decode (as in a prefix cut mid-message).
// complete says all of content was decoded.
func decodeMessages(content string) (msgs []message, complete bool) {
	s := strings.TrimSpace(content)
	if s == "" || (s[0] != '[' && s[0] != '{') {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if s[0] == '{' {
		var w wireMessage
		if err := dec.Decode(&w); err != nil || w.Role == "" {
			return nil, false
		}
		_, err := dec.Token()
		return []message{w.message()}, err == io.EOF
	}
	if _, err := dec.Token(); err != nil { // [
		return nil, false
	}
	for dec.More() {
		var w wireMessage
		if err := dec.Decode(&w); err != nil || w.Role == "" {
			return msgs, false
		}
		msgs = append(msgs, w.message())
	}
	if _, err := dec.Token(); err != nil { // ]
		return msgs, false
	}
	_, err := dec.Token()
	return msgs, err == io.EOF
}

func (w wireMessage) message() message {
	var lines, said []string
	tool := func(s string) { lines = append(lines, s) }
	say := func(s string) {
		if s != "" {
			lines, said = append(lines, s), append(said, s)
		}
	}
	say(textOf(w.Content))
	for _, p := range w.Parts {
		switch p.Type {
		case "tool_call":
			tool("→ " + p.Name + "(" + compact(p.Arguments) + ")")
		case "tool_call_response":
			tool("← " + textOf(p.Response))
		default:
			say(p.Text)
			say(textOf(p.Content))
		}
	}
	for _, c := range w.ToolCalls {
		tool("→ " + c.Function.Name + "(" + c.Function.Arguments + ")")
	}
	role := w.Role
	if w.ToolCallID != "" {
		role += " (" + w.ToolCallID + ")"
	}
	return message{Role: role, Text: strings.Join(lines, "\n"), Said: strings.Join(said, "\n")}
}

// textOf is a JSON string's value, the joined text of an array of text
// parts, or other JSON as written; "" for null or nothing.
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []wirePart
	if raw[0] == '[' && json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if t := p.Text + textOf(p.Content); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n")
	}
	return compact(raw)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// promptText is what a title shows of a first prompt: when it is messages
// JSON, the first user message (else the first message) that decodes from
// the prefix given; else the prompt as written.
func promptText(prefix string) string {
	msgs, _ := decodeMessages(prefix)
	for _, m := range msgs {
		if m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	for _, m := range msgs {
		if m.Text != "" {
			return m.Text
		}
	}
	return prefix
}
