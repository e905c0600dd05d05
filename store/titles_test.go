package store

import (
	"fmt"
	"strings"
	"testing"
)

func TestPromptText(t *testing.T) {
	user := strings.Repeat("long issue text ", 200)
	tests := []struct{ prefix, want string }{
		{`[{"role":"system","content":"be brief"},{"role":"user","content":"fix the bug"}]`, "fix the bug"},
		// A prefix cut inside the user message falls back to what decoded.
		{fmt.Sprintf(`[{"role":"system","content":"be brief"},{"role":"user","content":%q`, user)[:200], "be brief"},
		{`[{"role":"user","parts":[{"type":"text","content":"hello"}]}]`, "hello"},
		{"just text", "just text"},
		{`[{"role":"sys`, `[{"role":"sys`},
	}
	for _, tt := range tests {
		if got := promptText(tt.prefix); got != tt.want {
			t.Errorf("promptText(%.60q…) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

func TestThreadTitle(t *testing.T) {
	long := strings.Repeat("é", 100)
	tests := []struct {
		override, prompt, id, want string
	}{
		{"", "  Plan the\tmigration  ", "th", "Plan the migration"},
		{"", "\n  \nFix the login bug\nSteps:\n1. open /login", "th", "Fix the login bug"},
		{"", `[{"role":"system","parts":[{"type":"text","content":"You are a planner."}]},` +
			`{"role":"user","parts":[{"type":"text","content":"\nPlan issue 42\nThe config loader drops defaults."}]}]`, "th", "Plan issue 42"},
		{"  My title ", "prompt", "th", "My title"},
		{"", long, "th", strings.Repeat("é", 80) + "…"},
		{"", strings.Repeat("é", 80), "th", strings.Repeat("é", 80)},
		{"", " \n ", "th-1", "th-1"},
	}
	for _, tt := range tests {
		if got := threadTitle(tt.override, tt.prompt, tt.id); got != tt.want {
			t.Errorf("threadTitle(%q, %q, %q) = %q, want %q", tt.override, tt.prompt, tt.id, got, tt.want)
		}
	}
}
