package llmhttp

import (
	"encoding/json"

	"github.com/convtrace/convtrace/schema/genai"
)

// prompt returns the prompt of a call as chat messages JSON: the system
// instructions first, then the messages. Chat Completions and Anthropic
// messages are kept in their own shape, which the collector normalizes
// with schema/genai; Responses input items are turned into genai
// messages.
func prompt(r request) string {
	var msgs []json.RawMessage
	switch r.api {
	case apiChatCompletions:
		_ = json.Unmarshal(r.body["messages"], &msgs)
	case apiMessages:
		if sys := r.body["system"]; len(sys) > 0 && string(sys) != "null" {
			msgs = append(msgs, genai.Marshal(map[string]json.RawMessage{"role": genai.Marshal("system"), "content": sys}))
		}
		var rest []json.RawMessage
		_ = json.Unmarshal(r.body["messages"], &rest)
		msgs = append(msgs, rest...)
	case apiResponses:
		if s := genai.StringValue(r.body["instructions"]); s != "" {
			msgs = append(msgs, genai.Marshal(genai.Message{Role: "system", Parts: []genai.Part{genai.Text(s)}}))
		}
		msgs = append(msgs, responsesInput(r.body["input"])...)
	}
	if len(msgs) == 0 {
		return ""
	}
	return string(genai.Marshal(msgs))
}

// responsesInput turns Responses API input, a string or a list of items,
// into messages.
func responsesInput(raw json.RawMessage) []json.RawMessage {
	if s := genai.StringValue(raw); s != "" {
		return []json.RawMessage{genai.Marshal(genai.Message{Role: "user", Parts: []genai.Part{genai.Text(s)}})}
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		var m genai.Message
		switch genai.StringValue(it["type"]) {
		case "function_call":
			m = genai.Message{Role: "assistant", Parts: []genai.Part{genai.ToolCall(
				genai.StringValue(it["call_id"]), genai.StringValue(it["name"]), genai.StringValue(it["arguments"]))}}
		case "function_call_output":
			m = genai.Message{Role: "tool", Parts: []genai.Part{{
				Type: genai.PartToolResponse, ID: genai.StringValue(it["call_id"]), Response: it["output"]}}}
		case "message", "":
			m = genai.Message{Role: genai.StringValue(it["role"])}
			if s := genai.StringValue(it["content"]); s != "" {
				m.Parts = []genai.Part{genai.Text(s)}
			} else {
				var content []map[string]json.RawMessage
				_ = json.Unmarshal(it["content"], &content)
				for _, c := range content {
					if t := genai.StringValue(c["text"]); t != "" {
						m.Parts = append(m.Parts, genai.Text(t))
					}
				}
			}
		default:
			out = append(out, it["type"]) // keep the item's kind, at least
			continue
		}
		out = append(out, genai.Marshal(m))
	}
	return out
}
