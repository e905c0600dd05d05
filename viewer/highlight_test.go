package viewer

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/store"
)

func render(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Match {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func TestHighlight(t *testing.T) {
	tests := []struct{ text, q, want string }{
		{"plain text", "", "plain text"},
		{"Fix the Bug in bug.go", "bug", "Fix the [Bug] in [bug].go"},
		{"데이터 파이프라인 데이터", "데이터", "[데이터] 파이프라인 [데이터]"},
		{"設定ファイルを読む", "ファイル", "設定[ファイル]を読む"},
		{"ship it 🚀 now 🚀", "🚀", "ship it [🚀] now [🚀]"},
		{"ÉCOLE école", "école", "[ÉCOLE] [école]"},
		{"aaa", "aa", "[aa]a"},
		{"no match here", "xyz", "no match here"},
		{`<script>alert(1)</script>`, "script", `<[script]>alert(1)</[script]>`},
	}
	for _, tt := range tests {
		if got := render(highlight(tt.text, tt.q)); got != tt.want {
			t.Errorf("highlight(%q, %q) = %q, want %q", tt.text, tt.q, got, tt.want)
		}
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler ", 60) + "the NEEDLE is here " + strings.Repeat("tail ", 60)
	tests := []struct{ text, q, want string }{
		{"short\ntext  with   spaces", "text", "short [text] with spaces"},
		{"no query at all", "", "no query at all"},
		// A third of the window before the match, the rest after it.
		{long, "needle", "…" + strings.Repeat("filler ", 7) + "the [NEEDLE] is here " + strings.Repeat("tail ", 22)[:160-53-len("NEEDLE is here ")] + "…"},
	}
	for _, tt := range tests {
		got := render(snippet(tt.text, tt.q))
		if got != tt.want {
			t.Errorf("snippet(%q, %q) =\n%q\nwant\n%q", tt.text, tt.q, got, tt.want)
		}
		if n := len([]rune(strings.Trim(strings.NewReplacer("[", "", "]", "").Replace(got), "…"))); n > store.SnippetRunes {
			t.Errorf("snippet of %d runes, want at most %d", n, store.SnippetRunes)
		}
	}
}
