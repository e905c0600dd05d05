package genai

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitHistory(t *testing.T) {
	sys := `{"role":"system","parts":[{"type":"text","content":"Be brief, use [tools], {always}."}]}`
	user := `{"role":"user","parts":[{"type":"text","content":"Fix \"main.go\", then run ],{ tests"}]}`
	call := `{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"bash","arguments":{"cmd":"go test ./..."}}],"finish_reason":"tool_calls"}`
	result := `{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok\n"}]}`
	answer := `{"role":"assistant","parts":[{"type":"text","content":"Done."}]}`
	join := func(ms ...string) string { return "[" + strings.Join(ms, ",") + "]" }

	for _, c := range []struct {
		name, content string
		earlier       []string
		rest          string
		ok            bool
	}{
		{"loop", join(sys, user, call, result), []string{sys, user, call}, join(result), true},
		{"two answers", join(sys, user, call, result, answer, user), []string{sys, user, call, result, answer}, join(user), true},
		{"ends with the assistant", join(user, answer), []string{user, answer}, "[]", true},
		{"no assistant", join(sys, user), nil, "", false},
		{"one message", join(answer), []string{answer}, "[]", true},
		{"text", "Fix main.go", nil, "", false},
		{"empty array", "[]", nil, "", false},
		{"spaced", "[" + user + ", " + answer + "]", nil, "", false},
		{"not objects", `["a","b"]`, nil, "", false},
		{"cut", join(user, answer)[:40], nil, "", false},
		{"unbalanced", "[" + user + "]," + answer + "]", nil, "", false},
	} {
		earlier, rest, ok := SplitHistory(c.content)
		if ok != c.ok || !slices.Equal(earlier, c.earlier) || rest != c.rest {
			t.Errorf("%s: SplitHistory = %q, %q, %v; want %q, %q, %v", c.name, earlier, rest, ok, c.earlier, c.rest, c.ok)
			continue
		}
		if ok {
			if got := JoinHistory(earlier, rest); got != c.content {
				t.Errorf("%s: JoinHistory = %q, want %q", c.name, got, c.content)
			}
			checkPrefixes(t, earlier, rest, c.content)
		}
	}
	if got := JoinHistory(nil, "Fix main.go"); got != "Fix main.go" {
		t.Errorf("JoinHistory without history = %q", got)
	}
}

// Whatever the bytes, a split puts back together as they were.
func FuzzSplitHistory(f *testing.F) {
	for _, s := range []string{
		`[{"role":"user","parts":[]},{"role":"assistant","parts":[{"type":"text","content":"a\"],{b"}]},{"role":"tool","parts":[]}]`,
		`[{"role":"assistant"},{"x":"\\"}]`,
		`[{"role":"assistant","parts":[{"type":"text","content":"\\\""}]}]`,
		`[{}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		earlier, rest, ok := SplitHistory(content)
		if !ok {
			return
		}
		if len(earlier) == 0 || RoleOf(earlier[len(earlier)-1]) != "assistant" {
			t.Fatalf("SplitHistory(%q): history %q does not end with an assistant message", content, earlier)
		}
		if got := JoinHistory(earlier, rest); got != content {
			t.Fatalf("JoinHistory(SplitHistory(%q)) = %q", content, got)
		}
		checkPrefixes(t, earlier, rest, content)
	})
}

func TestMessageID(t *testing.T) {
	a, b := MessageID(`{"role":"user"}`), MessageID(`{"role":"user"} `)
	if len(a) != 32 || a == b || a != MessageID(`{"role":"user"}`) {
		t.Errorf("MessageID: %q, %q", a, b)
	}
}

// checkPrefixes checks that JoinHistoryPrefix is the start of the whole
// prompt at every limit, and with every start of rest a page may read.
func checkPrefixes(t *testing.T, earlier []string, rest, whole string) {
	t.Helper()
	for limit := 0; limit <= len(whole)+1; limit++ {
		got, cut := JoinHistoryPrefix(earlier, rest, false, limit)
		if want := whole[:min(limit, len(whole))]; got != want || cut != (limit < len(whole)) {
			t.Fatalf("JoinHistoryPrefix(%q, %q, false, %d) = %q, %v; want %q, %v", earlier, rest, limit, got, cut, want, limit < len(whole))
		}
	}
	for k := 1; k < len(rest); k++ {
		got, cut := JoinHistoryPrefix(earlier, rest[:k], true, len(whole))
		if !cut || !strings.HasPrefix(whole, got) || len(got) < len(whole)-len(rest) {
			t.Fatalf("JoinHistoryPrefix(%q, %q, true) = %q, %v: not the start of %q", earlier, rest[:k], got, cut, whole)
		}
	}
}
