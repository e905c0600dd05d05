package mcpserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema/genai"
)

func TestCutText(t *testing.T) {
	tests := []struct {
		s       string
		n       int
		want    string
		wantCut bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"데이터", 4, "데", true}, // never half a character
		{"데이터", 6, "데이", true},
		{"🚀x", 2, "", true},
	}
	for _, tt := range tests {
		if got, cut := cutText(tt.s, tt.n); got != tt.want || cut != tt.wantCut {
			t.Errorf("cutText(%q, %d) = %q, %v; want %q, %v", tt.s, tt.n, got, cut, tt.want, tt.wantCut)
		}
	}
}

func TestLastMessages(t *testing.T) {
	msg := func(role, text string) genai.Message {
		return genai.Message{Role: role, Parts: []genai.Part{genai.Text(text)}}
	}
	// A prompt repeats its history first: what is new is last.
	msgs := []genai.Message{msg("system", "be brief"), msg("user", "first question"), msg("assistant", "an answer"), msg("user", "what now?")}
	tests := []struct {
		n           int
		want        []messageOut
		wantEarlier int
		wantCut     bool
	}{
		{1000, []messageOut{{"system", "be brief"}, {"user", "first question"}, {"assistant", "an answer"}, {"user", "what now?"}}, 0, false},
		{18, []messageOut{{"assistant", "an answer"}, {"user", "what now?"}}, 2, false},
		{12, []messageOut{{"assistant", "an "}, {"user", "what now?"}}, 2, true},
		{4, []messageOut{{"user", "what"}}, 3, true},
	}
	for _, tt := range tests {
		got, earlier, cut := lastMessages(msgs, tt.n)
		if !reflect.DeepEqual(got, tt.want) || earlier != tt.wantEarlier || cut != tt.wantCut {
			t.Errorf("lastMessages(%d bytes) = %v, %d earlier, cut %v; want %v, %d, %v", tt.n, got, earlier, cut, tt.want, tt.wantEarlier, tt.wantCut)
		}
	}
}

// shrink halves the texts first, then drops the oldest items, and stops
// at the first answer that fits.
func TestShrink(t *testing.T) {
	build := func(items, size int) func(n, drop int) []string {
		return func(n, drop int) []string {
			out := make([]string, 0, items-drop)
			for range items - drop {
				out = append(out, strings.Repeat("x", min(n, size)))
			}
			return out
		}
	}
	tests := []struct {
		name             string
		items, size, n   int
		wantN, wantItems int
	}{
		{"fits as asked", 10, 1000, 4096, 1000, 10},
		{"shorter texts", 100, 4096, 4096, 1024, 100},
		{"fewer items", 2000, 4096, 4096, minTextBytes, 0},
	}
	for _, tt := range tests {
		got := shrink(tt.n, tt.items, build(tt.items, tt.size))
		if answerBytes(got) > maxToolBytes {
			t.Errorf("%s: %d bytes, over %d", tt.name, answerBytes(got), maxToolBytes)
		}
		if tt.wantItems > 0 && (len(got) != tt.wantItems || len(got[0]) != tt.wantN) {
			t.Errorf("%s: %d items of %d bytes, want %d of %d", tt.name, len(got), len(got[0]), tt.wantItems, tt.wantN)
		}
		if tt.wantItems == 0 && (len(got) == 0 || len(got) == tt.items || len(got[0]) != minTextBytes) {
			t.Errorf("%s: %d items of %d bytes, want fewer than %d of %d", tt.name, len(got), len(got[0]), tt.items, minTextBytes)
		}
	}
}
