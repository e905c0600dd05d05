package viewer

import "github.com/convtrace/convtrace/schema/genai"

// roleLabel is who said m as a page shows it: its role, and for a tool
// result the call it answers.
func roleLabel(m genai.Message) string {
	if id := m.CallID(); id != "" {
		return m.Role + " (" + id + ")"
	}
	return m.Role
}

// promptText is what a title shows of a first prompt: when it is messages
// JSON, the first user message (else the first message) that decodes from
// the prefix given; else the prompt as written.
func promptText(prefix string) string {
	msgs, _ := genai.Decode(prefix)
	for _, m := range msgs {
		if text := m.Text(); m.Role == "user" && text != "" {
			return text
		}
	}
	for _, m := range msgs {
		if text := m.Text(); text != "" {
			return text
		}
	}
	return prefix
}
