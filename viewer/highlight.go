package viewer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convtrace/convtrace/viewer/query"
)

// Segment is a piece of text that a search query matched, or did not. A
// page renders matches inside <mark>; html/template escapes both kinds.
type Segment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// highlight splits text at every case-insensitive occurrence of q, so that
// a page can mark the matches without building HTML from model output. It
// matches what positionCaseInsensitiveUTF8 finds in ClickHouse: rune by
// rune, Unicode simple case folding, so Korean, Japanese and emoji match
// themselves and "É" matches "é". An empty q yields text as one segment.
func highlight(text, q string) []Segment {
	if q == "" || text == "" {
		return []Segment{{Text: text}}
	}
	var out []Segment
	plain := 0 // start of the text not yet emitted
	for i := 0; i < len(text); {
		if n := foldPrefix(text[i:], q); n > 0 {
			if plain < i {
				out = append(out, Segment{Text: text[plain:i]})
			}
			out = append(out, Segment{Text: text[i : i+n], Match: true})
			i += n
			plain = i
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	if plain < len(text) {
		out = append(out, Segment{Text: text[plain:]})
	}
	return out
}

// foldPrefix returns the length in bytes of the prefix of s that equals q
// under simple case folding, or 0 when s does not start with q.
func foldPrefix(s, q string) int {
	n := 0
	for _, qr := range q {
		if n >= len(s) {
			return 0
		}
		sr, size := utf8.DecodeRuneInString(s[n:])
		if sr != qr && !equalFoldRune(sr, qr) {
			return 0
		}
		n += size
	}
	return n
}

// equalFoldRune reports whether a and b are the same letter in another
// case: one of the runes in a's folding orbit is b.
func equalFoldRune(a, b rune) bool {
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// snippet returns the part of text around the first match of q, at most
// snippetRunes runes on one line, with … where it was cut, split into
// highlight segments. Without a match it is the start of text.
func snippet(text, q string) []Segment {
	line := strings.Join(strings.Fields(text), " ")
	start := 0
	if q != "" {
		for i := 0; i < len(line); {
			if foldPrefix(line[i:], q) > 0 {
				start = i
				break
			}
			_, size := utf8.DecodeRuneInString(line[i:])
			i += size
		}
	}
	// Keep a third of the window before the match for context.
	before := []rune(line[:start])
	lead := min(len(before), query.SnippetRunes/3)
	rest := []rune(line[start:])
	tail := min(len(rest), query.SnippetRunes-lead)
	s := string(before[len(before)-lead:]) + string(rest[:tail])
	if lead < len(before) {
		s = "…" + s
	}
	if tail < len(rest) {
		s += "…"
	}
	return highlight(s, q)
}
