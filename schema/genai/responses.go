package genai

import "encoding/json"

// ResponsesInput turns OpenAI Responses API input, a string or a list of
// items, into messages in the stored shape (an item of another kind keeps
// its kind, at least).
func ResponsesInput(raw json.RawMessage) []json.RawMessage {
	if s := StringValue(raw); s != "" {
		return []json.RawMessage{Marshal(Message{Role: "user", Parts: []Part{Text(s)}})}
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		var m Message
		switch StringValue(it["type"]) {
		case "function_call":
			m = Message{Role: "assistant", Parts: []Part{ToolCall(
				StringValue(it["call_id"]), StringValue(it["name"]), StringValue(it["arguments"]))}}
		case "function_call_output":
			m = Message{Role: "tool", Parts: []Part{{
				Type: PartToolResponse, ID: StringValue(it["call_id"]), Response: it["output"]}}}
		case "message", "":
			m = Message{Role: StringValue(it["role"])}
			if s := StringValue(it["content"]); s != "" {
				m.Parts = []Part{Text(s)}
			} else {
				var content []map[string]json.RawMessage
				_ = json.Unmarshal(it["content"], &content)
				for _, c := range content {
					if t := StringValue(c["text"]); t != "" {
						m.Parts = append(m.Parts, Text(t))
					}
				}
			}
		default:
			out = append(out, it["type"]) // keep the item's kind, at least
			continue
		}
		out = append(out, Marshal(m))
	}
	return out
}
