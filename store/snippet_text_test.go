package store

import "testing"

func TestFragmentText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, not JSON", "plain text, not JSON"},
		{`{"role":"user","parts":[{"type":"text","content":"deploy the NEEDLE now"}]}`, "deploy the NEEDLE now"},
		// Cut inside a string at both ends.
		{`ploy the NEEDLE now"}]},{"role":"assistant","parts":[{"type":"text","content":"done, the rel`, "ploy the NEEDLE now done, the rel"},
		// Cut inside a key: the value after it is kept, as its key is
		// unknown.
		{`pe":"text","content":"line one\nline two \"quoted\" é"}`, "text line one\nline two \"quoted\" é"},
		{`,"content":"\u00e9t\u00e9 NEEDLE"}`, "été NEEDLE"},
		// An escape cut in two by the window's end.
		{`{"type":"text","content":"ends with \u00`, "ends with "},
		{`{"type":"tool_call","id":"call_1","name":"Bash","arguments":{"command":"ls -la"}}`, "Bash ls -la"},
	}
	for _, tt := range tests {
		if got := FragmentText(tt.in); got != tt.want {
			t.Errorf("FragmentText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
