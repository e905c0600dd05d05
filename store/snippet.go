package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet returns the part of text around the first match of q, at most
// SnippetRunes runes on one line, with … where it was cut: what a search
// hit shows of its turn. Without a match it is the start of text.
func Snippet(text, q string) string {
	line := strings.Join(strings.Fields(text), " ")
	start := 0
	if q != "" {
		for i := 0; i < len(line); {
			if FoldPrefix(line[i:], q) > 0 {
				start = i
				break
			}
			_, size := utf8.DecodeRuneInString(line[i:])
			i += size
		}
	}
	// Keep a third of the window before the match for context.
	before := []rune(line[:start])
	lead := min(len(before), SnippetRunes/3)
	rest := []rune(line[start:])
	tail := min(len(rest), SnippetRunes-lead)
	s := string(before[len(before)-lead:]) + string(rest[:tail])
	if lead < len(before) {
		s = "…" + s
	}
	if tail < len(rest) {
		s += "…"
	}
	return s
}

// FoldPrefix returns the length in bytes of the prefix of s that equals q
// under simple case folding, or 0 when s does not start with q: a match as
// positionCaseInsensitiveUTF8 finds it in ClickHouse, rune by rune, so
// Korean, Japanese and emoji match themselves and "É" matches "é".
func FoldPrefix(s, q string) int {
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
