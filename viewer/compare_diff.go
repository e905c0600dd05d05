package viewer

import (
	"strings"
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

// diffTimeout bounds one diff: past it, diffmatchpatch gives up finding
// the fewest edits and marks the rest as replaced, a coarser diff but a
// correct one. Two unrelated long answers reach it; two versions of one
// answer stay far below (BenchmarkWordDiff60KB*).
const diffTimeout = 500 * time.Millisecond

// wordDiff returns the word-level diff that turns a into b, lines first
// and then the replaced lines word by word (docs/design/compare.md). The
// chunks' texts joined give a (without the inserts) or b (without the
// deletes), white space and line breaks included.
func wordDiff(a, b string) []diffChunk {
	deadline := time.Now().Add(diffTimeout)
	var (
		chunks   []diffChunk
		del, ins strings.Builder
	)
	rediff := func() {
		pairs := [][2]string{{del.String(), ins.String()}}
		// Lines edited in place, as many replaced as replacing, are
		// diffed pair by pair: as one text, a run of lines each with an
		// edit costs its length times its edits.
		if dl, il := splitLines(del.String()), splitLines(ins.String()); len(dl) > 1 && len(dl) == len(il) {
			pairs = pairs[:0]
			for i := range dl {
				pairs = append(pairs, [2]string{dl[i], il[i]})
			}
		}
		for _, p := range pairs {
			if left := time.Until(deadline); left > 0 {
				chunks = append(chunks, diffUnits(splitWords(p[0]), splitWords(p[1]), left, true)...)
			} else {
				chunks = append(chunks, diffChunk{opDelete, p[0]}, diffChunk{opInsert, p[1]})
			}
		}
		del.Reset()
		ins.Reset()
	}
	for _, d := range diffUnits(splitLines(a), splitLines(b), diffTimeout, false) {
		switch d.Op {
		case opDelete:
			del.WriteString(d.Text)
		case opInsert:
			ins.WriteString(d.Text)
		default:
			rediff()
			chunks = append(chunks, d)
		}
	}
	rediff()
	return mergeChunks(chunks)
}

// diffUnits diffs the units of two texts within timeout; semantic cleans
// up equalities too short to matter between edits (a space between two
// replaced words).
func diffUnits(a, b []string, timeout time.Duration, semantic bool) []diffChunk {
	var (
		units []string
		ids   = map[string]rune{}
	)
	encode := func(us []string) []rune {
		rs := make([]rune, len(us))
		for i, u := range us {
			r, ok := ids[u]
			if !ok {
				r = unitRune(len(units))
				ids[u] = r
				units = append(units, u)
			}
			rs[i] = r
		}
		return rs
	}
	ra, rb := encode(a), encode(b)
	dmp := diffmatchpatch.New()
	diffs := runeDiff(dmp, ra, rb, time.Now().Add(timeout))
	if semantic {
		diffs = dmp.DiffCleanupSemantic(diffs)
	}
	chunks := make([]diffChunk, 0, len(diffs))
	for _, d := range diffs {
		var text strings.Builder
		for _, r := range d.Text {
			text.WriteString(units[runeUnit(r)])
		}
		op := opEqual
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = opInsert
		case diffmatchpatch.DiffDelete:
			op = opDelete
		}
		chunks = append(chunks, diffChunk{Op: op, Text: text.String()})
	}
	return chunks
}

// runeDiff diffs a and b, the bisection giving up at deadline. It calls
// DiffBisect itself: DiffMainRunes with a timeout first seeks a half match,
// quadratic on repetitive text whatever the timeout (docs/design/compare.md).
func runeDiff(dmp *diffmatchpatch.DiffMatchPatch, a, b []rune, deadline time.Time) []diffmatchpatch.Diff {
	dmp.DiffTimeout = 0
	if min(len(a), len(b)) < 2 {
		return dmp.DiffMainRunes(a, b, false)
	}
	return dmp.DiffCleanupMerge(dmp.DiffBisect(string(a), string(b), deadline))
}

// mergeChunks drops empty chunks and joins neighbours of one operation.
func mergeChunks(chunks []diffChunk) []diffChunk {
	out := []diffChunk{}
	for _, c := range chunks {
		switch n := len(out); {
		case c.Text == "":
		case n > 0 && out[n-1].Op == c.Op:
			out[n-1].Text += c.Text
		default:
			out = append(out, c)
		}
	}
	return out
}

// splitLines cuts s after each line break; joined, the lines are s.
func splitLines(s string) []string {
	return strings.SplitAfter(s, "\n")
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
