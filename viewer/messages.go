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
