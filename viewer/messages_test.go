package viewer

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema/genai"
)

func TestMessagesAsShown(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // messages as role: text | …; "" when not messages
	}{
		{
			name:    "OpenAI messages, as the demo records a prompt",
			content: `[{"role":"system","content":"You are codex-planner.\nPhase: plan."},{"role":"user","content":"Issue #418: TypeError \u0026 🐛"}]`,
			want:    "system: You are codex-planner.\nPhase: plan. | user: Issue #418: TypeError & 🐛",
		},
		{
			name:    "OpenAI assistant message calling a tool",
			content: `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/config.ts\"}"}}]}`,
			want:    `assistant: → read_file({"path":"src/config.ts"})`,
		},
		{
			name:    "OpenAI text parts and a tool message",
			content: `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]},{"role":"tool","tool_call_id":"call_1","content":"42"}]`,
			want:    "user: a\nb | tool (call_1): ← 42",
		},
		{
			name:    "OpenTelemetry GenAI parts",
			content: `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"location":"Paris"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"rainy, 57°F"}]}]`,
			want:    `user: Weather in Paris? | assistant: → get_weather({"location":"Paris"}) | tool (c1): ← rainy, 57°F`,
		},
		{name: "plain text", content: "Plan A — fix the TypeError", want: ""},
		{name: "tool arguments are not messages", content: `{"path":"src/config.ts"}`, want: ""},
		{name: "array of strings", content: `["a","b"]`, want: ""},
		{name: "messages followed by text", content: `[{"role":"user","content":"a"}] and more`, want: ""},
		{name: "cut mid-message", content: `[{"role":"user","content":"a"},{"role":"assistant","conte`, want: ""},
		{name: "empty array", content: `[]`, want: ""},
	}
	for _, tt := range tests {
		msgs, ok := genai.Decode(tt.content)
		var parts []string
		for _, m := range msgs {
			parts = append(parts, roleLabel(m)+": "+m.Text())
		}
		got := strings.Join(parts, " | ")
		if !ok {
			got = ""
		}
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: Decode(%s) = %q, %v; want %q", tt.name, tt.content, got, ok, tt.want)
		}
	}
}

// Said keeps what was said and leaves out tool calls and results, whole:
// a multi-line tool result or arguments string leaves no line behind.
func TestMessageSaid(t *testing.T) {
	tests := []struct{ content, want string }{
		{`{"role":"assistant","content":"Reading it.","tool_calls":[{"function":{"name":"read_file","arguments":"{\n\"path\": \"a\"\n}"}}]}`, "Reading it."},
		{`{"role":"tool","parts":[{"type":"tool_call_response","response":"line 1\nline 2"}]}`, ""},
		{`{"role":"user","parts":[{"type":"text","content":"→ an arrow the user typed"}]}`, "→ an arrow the user typed"},
	}
	for _, tt := range tests {
		msgs, ok := genai.Decode(tt.content)
		if !ok || len(msgs) != 1 || msgs[0].Said() != tt.want {
			t.Errorf("Decode(%s) = %+v, %v; want one message saying %q", tt.content, msgs, ok, tt.want)
		}
	}
}
