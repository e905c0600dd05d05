package llmhttp

import (
	"bytes"
	"encoding/json"
)

// prompt returns the prompt of a call as chat messages JSON: the system
// instructions first, then the messages. Chat Completions and Anthropic
// messages are kept in their own shape, which the collector normalizes;
// Responses input items are turned into messages with OTel GenAI parts.
func prompt(r request) string {
	var msgs []json.RawMessage
	switch r.api {
	case apiChatCompletions:
		_ = json.Unmarshal(r.body["messages"], &msgs)
	case apiMessages:
		if sys := r.body["system"]; len(sys) > 0 && string(sys) != "null" {
			msgs = append(msgs, marshal(map[string]json.RawMessage{"role": marshal("system"), "content": sys}))
		}
		var rest []json.RawMessage
		_ = json.Unmarshal(r.body["messages"], &rest)
		msgs = append(msgs, rest...)
	case apiResponses:
		if s := jsonString(r.body["instructions"]); s != "" {
			msgs = append(msgs, marshal(message{Role: "system", Parts: []part{textPart(s)}}))
		}
		msgs = append(msgs, responsesInput(r.body["input"])...)
	}
	if len(msgs) == 0 {
		return ""
	}
	return string(marshal(msgs))
}

// responsesInput turns Responses API input, a string or a list of items,
// into messages.
func responsesInput(raw json.RawMessage) []json.RawMessage {
	if s := jsonString(raw); s != "" {
		return []json.RawMessage{marshal(message{Role: "user", Parts: []part{textPart(s)}})}
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		switch jsonString(it["type"]) {
		case "function_call":
			out = append(out, marshal(message{Role: "assistant", Parts: []part{
				toolCallPart(jsonString(it["call_id"]), jsonString(it["name"]), jsonString(it["arguments"]))}}))
		case "function_call_output":
			out = append(out, marshal(message{Role: "tool", Parts: []part{{
				Type: "tool_call_response", ID: jsonString(it["call_id"]), Response: it["output"]}}}))
		case "message", "":
			m := message{Role: jsonString(it["role"])}
			if s := jsonString(it["content"]); s != "" {
				m.Parts = []part{textPart(s)}
			} else {
				var content []map[string]json.RawMessage
				_ = json.Unmarshal(it["content"], &content)
				for _, c := range content {
					if t := jsonString(c["text"]); t != "" {
						m.Parts = append(m.Parts, textPart(t))
					}
				}
			}
			out = append(out, marshal(m))
		default:
			out = append(out, it["type"]) // keep the item's kind, at least
		}
	}
	return out
}

// message is one message in the OTel GenAI messages shape.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
}

func textPart(s string) part { return part{Type: "text", Content: s} }

// toolCallPart keeps arguments that are JSON as JSON and anything else,
// such as arguments cut short by a broken stream, as a string.
func toolCallPart(id, name, arguments string) part {
	args := json.RawMessage(bytes.TrimSpace([]byte(arguments)))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	} else if !json.Valid(args) {
		args = marshal(arguments)
	}
	return part{Type: "tool_call", ID: id, Name: name, Arguments: args}
}

// marshal encodes v without HTML escaping; v never fails to encode.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
