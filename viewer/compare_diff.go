package viewer

import (
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Operations of a diff chunk.
const (
	opEqual  = "equal"
	opInsert = "insert"
	opDelete = "delete"
)

// diffChunk is a run of text both sides share (equal), or that only the
// second (insert) or the first (delete) holds.
type diffChunk struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// diffTimeout bounds one diff: past it, diffmatchpatch returns a coarser
// but still correct diff instead of the minimal one.
const diffTimeout = 2 * time.Second

// wordDiff returns the word-level diff that turns a into b. Each word,
// run of white space, or other character is one unit: diffmatchpatch
// diffs runes, so each distinct unit is mapped to a rune of its own (as
// its DiffLinesToRunes does with lines) and the diff mapped back. The
// chunks' texts joined give a (without the inserts) or b (without the
// deletes), white space and line breaks included.
func wordDiff(a, b string) []diffChunk {
	var (
		units []string
		ids   = map[string]rune{}
	)
	encode := func(s string) []rune {
		var rs []rune
		for _, w := range splitWords(s) {
			r, ok := ids[w]
			if !ok {
				r = unitRune(len(units))
				ids[w] = r
				units = append(units, w)
			}
			rs = append(rs, r)
		}
		return rs
	}
	ra, rb := encode(a), encode(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))

	chunks := make([]diffChunk, 0, len(diffs))
	for _, d := range diffs {
		var text []byte
		for _, r := range d.Text {
			text = append(text, units[runeUnit(r)]...)
		}
		op := opEqual
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = opInsert
		case diffmatchpatch.DiffDelete:
			op = opDelete
		}
		chunks = append(chunks, diffChunk{Op: op, Text: string(text)})
	}
	return chunks
}

// surrogates is the range of code points that are no runes: unitRune
// skips it.
const surrogateFirst, surrogateEnd = 0xD800, 0xE000

// unitRune is the rune that stands for the i-th distinct unit.
func unitRune(i int) rune {
	if i >= surrogateFirst {
		i += surrogateEnd - surrogateFirst
	}
	return rune(i)
}

// runeUnit is the unit index unitRune(i) stands for.
func runeUnit(r rune) int {
	if r >= surrogateEnd {
		r -= surrogateEnd - surrogateFirst
	}
	return int(r)
}

// splitWords cuts s into the units a word diff compares: runs of letters,
// digits and marks (a word), runs of white space, and any other character
// alone (punctuation, a symbol, an emoji, and a character of a script
// written without spaces, such as Chinese or Japanese). Joined, they are
// s.
func splitWords(s string) []string {
	var units []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if k := unitKind(r); k != kindOther {
			for n < len(s) {
				r2, m := utf8.DecodeRuneInString(s[n:])
				if unitKind(r2) != k {
					break
				}
				n += m
			}
		}
		units = append(units, s[:n])
		s = s[n:]
	}
	return units
}

const (
	kindOther = iota
	kindWord
	kindSpace
)

func unitKind(r rune) int {
	switch {
	case unicode.IsSpace(r):
		return kindSpace
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai):
		return kindOther
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_':
		return kindWord
	}
	return kindOther
}

// cutText returns the first max bytes of s, cut at a rune boundary, and
// whether it cut anything.
func cutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max], true
}
