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
		msgs = append(msgs, genai.ResponsesInput(r.body["input"])...)
	}
	if len(msgs) == 0 {
		return ""
	}
	return string(genai.Marshal(msgs))
}
