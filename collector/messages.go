package collector

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Every convention's chat content is stored in one shape, the OTel GenAI
// input and output messages JSON (gen-ai-input-messages.json and
// gen-ai-output-messages.json of the semantic conventions):
//
//	[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},
//	 {"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]},
//	 {"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_calls"},
//	 {"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"rainy, 14°C"}]}]
//
// Tool call arguments that are JSON are stored as JSON (object keys sorted),
// whatever form the source gave them in, so the same call reads the same
// from every convention and every transport.

// message is one chat message in the normalized shape.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// Part types of the normalized shape.
const (
	partText         = "text"
	partReasoning    = "reasoning"
	partToolCall     = "tool_call"
	partToolResponse = "tool_call_response"
)

// part is one part of a message. Parts of other types (blob, uri, file…)
// are kept as sent, in raw.
type part struct {
	typ       string
	content   string          // text, reasoning
	id        string          // tool_call, tool_call_response
	name      string          // tool_call
	arguments json.RawMessage // tool_call
	response  json.RawMessage // tool_call_response
	raw       json.RawMessage // any other type
}

func (p part) MarshalJSON() ([]byte, error) {
	switch p.typ {
	case partText, partReasoning:
		return marshalJSON(struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}{p.typ, p.content}), nil
	case partToolCall:
		return marshalJSON(struct {
			Type      string          `json:"type"`
			ID        string          `json:"id,omitempty"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments,omitempty"`
		}{p.typ, p.id, p.name, p.arguments}), nil
	case partToolResponse:
		resp := p.response
		if resp == nil {
			resp = json.RawMessage("null")
		}
		return marshalJSON(struct {
			Type     string          `json:"type"`
			ID       string          `json:"id,omitempty"`
			Response json.RawMessage `json:"response"`
		}{p.typ, p.id, resp}), nil
	}
	return p.raw, nil
}

func textPart(s string) part { return part{typ: partText, content: s} }

// toolCallPart returns a tool call whose arguments are JSON text or, when
// they are not JSON, a plain string.
func toolCallPart(id, name, arguments string) part {
	p := part{typ: partToolCall, id: id, name: name}
	if arguments != "" {
		p.arguments = jsonOrString(arguments)
	}
	return p
}

// toolResponsePart returns a tool result given as text.
func toolResponsePart(id, response string) part {
	return part{typ: partToolResponse, id: id, response: marshalJSON(response)}
}

// renderMessages returns the normalized JSON of ms, "" for none.
func renderMessages(ms []message) string {
	if len(ms) == 0 {
		return ""
	}
	for i := range ms {
		if ms[i].Parts == nil {
			ms[i].Parts = []part{}
		}
	}
	return string(marshalJSON(ms))
}

// plainText returns the text of output that is one message of text parts
// only, the common answer of a chat call.
func plainText(ms []message) (string, bool) {
	if len(ms) != 1 {
		return "", false
	}
	texts := make([]string, 0, len(ms[0].Parts))
	for _, p := range ms[0].Parts {
		if p.typ != partText {
			return "", false
		}
		texts = append(texts, p.content)
	}
	return strings.Join(texts, "\n"), true
}

// toolCalls returns the tool call parts of ms.
func toolCalls(ms []message) []part {
	var calls []part
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.typ == partToolCall {
				calls = append(calls, p)
			}
		}
	}
	return calls
}

// parseMessages reads a JSON array of messages, in the OTel GenAI shape
// (role, parts) or the chat-completions shape many instrumentations record
// (role, content, tool_calls, tool_call_id).
func parseMessages(s string) ([]message, bool) {
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raws); err != nil {
		return nil, false
	}
	ms := make([]message, 0, len(raws))
	for _, r := range raws {
		if r == nil {
			continue
		}
		ms = append(ms, messageFromJSON(r, ""))
	}
	return ms, true
}

// messageFromJSON reads one message object of either shape; role is the
// default when it names none.
func messageFromJSON(r map[string]json.RawMessage, role string) message {
	m := message{Role: jsonString(r["role"]), FinishReason: jsonString(r["finish_reason"])}
	if m.Role == "" {
		m.Role = role
	}
	if parts, ok := r["parts"]; ok {
		m.Parts = partsFromJSON(parts)
		return m
	}
	if m.Role == "tool" && !holdsToolResults(r["content"]) {
		// A tool result: its content answers the call it names.
		id := firstString(r, "tool_call_id", "id")
		m.Parts = []part{{typ: partToolResponse, id: id, response: toolResponse(r["content"])}}
		return m
	}
	m.Parts = partsFromJSON(r["content"])
	var calls []map[string]json.RawMessage
	_ = json.Unmarshal(r["tool_calls"], &calls)
	for _, c := range calls {
		m.Parts = append(m.Parts, toolCallFromJSON(c))
	}
	return m
}

// toolCallFromJSON reads a chat-completions tool call
// {"id", "type": "function", "function": {"name", "arguments"}}, or a flat
// {"id", "name", "arguments"}.
func toolCallFromJSON(c map[string]json.RawMessage) part {
	fn := c
	var inner map[string]json.RawMessage
	if json.Unmarshal(c["function"], &inner) == nil && inner != nil {
		fn = inner
	}
	p := part{typ: partToolCall, id: jsonString(c["id"]), name: jsonString(fn["name"])}
	p.arguments = argumentsJSON(fn["arguments"])
	return p
}

// partsFromJSON reads message content: a string, or an array of parts in
// the OTel shape, the chat-completions shape ({"type":"text","text"}) or
// the Anthropic shape (tool_use, tool_result, thinking).
func partsFromJSON(raw json.RawMessage) []part {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '"':
		return textOrParts(jsonString(raw))
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		parts := make([]part, 0, len(items))
		for _, it := range items {
			parts = append(parts, partFromJSON(it)...)
		}
		return parts
	}
	return []part{textPart(string(canonicalJSON(raw)))}
}

func partFromJSON(raw json.RawMessage) []part {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil || r == nil {
		return partsFromJSON(raw) // a bare string item
	}
	switch typ := jsonString(r["type"]); typ {
	case partText, partReasoning:
		return []part{{typ: typ, content: firstString(r, "content", "text", "reasoning")}}
	case "thinking":
		return []part{{typ: partReasoning, content: jsonString(r["thinking"])}}
	case partToolCall:
		return []part{{typ: partToolCall, id: jsonString(r["id"]), name: jsonString(r["name"]), arguments: argumentsJSON(r["arguments"])}}
	case "tool_use":
		return []part{{typ: partToolCall, id: jsonString(r["id"]), name: jsonString(r["name"]), arguments: argumentsJSON(r["input"])}}
	case partToolResponse:
		resp := r["response"]
		if resp == nil {
			resp = r["result"]
		}
		return []part{{typ: partToolResponse, id: jsonString(r["id"]), response: toolResponse(resp)}}
	case "tool_result":
		return []part{{typ: partToolResponse, id: jsonString(r["tool_use_id"]), response: toolResponse(r["content"])}}
	case "tool-call": // the Vercel AI SDK's
		return []part{{typ: partToolCall, id: jsonString(r["toolCallId"]), name: jsonString(r["toolName"]), arguments: argumentsJSON(firstRaw(r, "args", "input"))}}
	case "tool-result":
		return []part{{typ: partToolResponse, id: jsonString(r["toolCallId"]), response: toolResponse(firstRaw(r, "result", "output"))}}
	case "":
		return []part{textPart(string(canonicalJSON(raw)))}
	default:
		return []part{{typ: typ, raw: canonicalJSON(raw)}}
	}
}

// textOrParts reads content recorded as a string attribute: the text
// itself, or a JSON array of content parts that multimodal messages are
// serialized to.
func textOrParts(s string) []part {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
		var items []map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &items) == nil && len(items) > 0 {
			typed := true
			for _, it := range items {
				typed = typed && jsonString(it["type"]) != ""
			}
			if typed {
				return partsFromJSON(json.RawMessage(t))
			}
		}
	}
	if s == "" {
		return nil
	}
	return []part{textPart(s)}
}

// argumentsJSON normalizes tool call arguments given as a JSON value: a
// string holding JSON becomes that JSON.
func argumentsJSON(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return jsonOrString(jsonString(raw))
	}
	return canonicalJSON(raw)
}

// toolResponse normalizes a tool result given as a JSON value. A result
// recorded as content parts becomes its text.
func toolResponse(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '[' {
		var texts []string
		for _, p := range partsFromJSON(raw) {
			if p.typ != partText {
				return canonicalJSON(raw)
			}
			texts = append(texts, p.content)
		}
		return marshalJSON(strings.Join(texts, "\n"))
	}
	return canonicalJSON(raw)
}

// jsonOrString returns s itself when it is a JSON object or array, else s
// as a JSON string.
func jsonOrString(s string) json.RawMessage {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if json.Valid([]byte(t)) {
			return canonicalJSON(json.RawMessage(t))
		}
	}
	return marshalJSON(s)
}

// canonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers kept as written.
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return marshalJSON(string(raw))
	}
	return marshalJSON(v)
}

// marshalJSON encodes v without escaping HTML characters: content is
// escaped where it is shown, not where it is stored.
func marshalJSON(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// jsonString returns a JSON string's value; other values as JSON text;
// "" for null or nothing.
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(canonicalJSON(raw))
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

// firstRaw returns the value of the first key present.
func firstRaw(r map[string]json.RawMessage, keys ...string) json.RawMessage {
	for _, k := range keys {
		if v, ok := r[k]; ok {
			return v
		}
	}
	return nil
}

func firstString(r map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if v, ok := r[k]; ok {
			return jsonString(v)
		}
	}
	return ""
}
