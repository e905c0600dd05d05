package viewer

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWordDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []diffChunk
	}{
		{"one word each", "the quick brown fox", "the slow brown dog", []diffChunk{
			{opEqual, "the "}, {opDelete, "quick"}, {opInsert, "slow"}, {opEqual, " brown "}, {opDelete, "fox"}, {opInsert, "dog"},
		}},
		{"a word added", "a b c", "a b b c", []diffChunk{{opEqual, "a b "}, {opInsert, "b "}, {opEqual, "c"}}},
		{"identical", "same text\n\nkept", "same text\n\nkept", []diffChunk{{opEqual, "same text\n\nkept"}}},
		{"both empty", "", "", []diffChunk{}},
		{"from nothing", "", "new words", []diffChunk{{opInsert, "new words"}}},
		{"a line added", "line one\nline two\n", "line one\n\nline two\n", []diffChunk{
			{opEqual, "line one\n"}, {opInsert, "\n"}, {opEqual, "line two\n"},
		}},
		{"words within changed lines", "# Plan\nstep one: read\nstep two: fix\n\nend", "# Plan\nstep one: reproduce\nstep 2: fix it\n\nend", []diffChunk{
			{opEqual, "# Plan\nstep one: "}, {opDelete, "read"}, {opInsert, "reproduce"}, {opEqual, "\nstep "},
			{opDelete, "two"}, {opInsert, "2"}, {opEqual, ": fix"}, {opInsert, " it"}, {opEqual, "\n\nend"},
		}},
		{"lines edited in place", "a b\nc d\n", "a x\nc y\n", []diffChunk{
			{opEqual, "a "}, {opDelete, "b"}, {opInsert, "x"}, {opEqual, "\nc "}, {opDelete, "d"}, {opInsert, "y"}, {opEqual, "\n"},
		}},
		{"spaces kept", "a  b", "a b", []diffChunk{{opEqual, "a"}, {opDelete, "  "}, {opInsert, " "}, {opEqual, "b"}}},
		{"Korean words", "안녕하세요 세계", "안녕하세요 여러분", []diffChunk{{opEqual, "안녕하세요 "}, {opDelete, "세계"}, {opInsert, "여러분"}}},
		{"Japanese by character", "東京は雨です", "東京は晴れです", []diffChunk{
			{opEqual, "東京は"}, {opDelete, "雨"}, {opInsert, "晴れ"}, {opEqual, "です"},
		}},
		{"emoji and accents", "café ✅ done", "café ❌ done", []diffChunk{{opEqual, "café "}, {opDelete, "✅"}, {opInsert, "❌"}, {opEqual, " done"}}},
		{"punctuation alone", "Plan A — fix it.", "Plan B — fix it!", []diffChunk{
			{opEqual, "Plan "}, {opDelete, "A"}, {opInsert, "B"}, {opEqual, " — fix it"}, {opDelete, "."}, {opInsert, "!"},
		}},
		{"all different", "one two three", "uno dos tres", []diffChunk{{opDelete, "one two three"}, {opInsert, "uno dos tres"}}},
	}
	for _, tt := range tests {
		got := wordDiff(tt.a, tt.b)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: wordDiff(%q, %q)\n got %q\nwant %q", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}

// joinSide is the text of one side of a diff: a without the inserts, b
// without the deletes.
func joinSide(chunks []diffChunk, skip string) string {
	var b strings.Builder
	for _, d := range chunks {
		if d.Op != skip {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// More distinct words than there are runes below the surrogates: the
// units past them map to runes above, and back.
func TestWordDiffManyWords(t *testing.T) {
	words := make([]string, 60_000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	a := strings.Join(words, " ")
	words[59_000] = "changed"
	b := strings.Join(words, " ")
	got := wordDiff(a, b)
	if joinSide(got, opInsert) != a || joinSide(got, opDelete) != b {
		t.Fatalf("the chunks do not give back the two texts")
	}
	var edits []diffChunk
	for _, d := range got {
		if d.Op != opEqual {
			edits = append(edits, d)
		}
	}
	if want := []diffChunk{{opDelete, "w59000"}, {opInsert, "changed"}}; !reflect.DeepEqual(edits, want) {
		t.Errorf("edits %q, want %q", edits, want)
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		s       string
		max     int
		want    string
		wantCut bool
	}{
		{"short", 10, "short", false},
		{"exactly", 7, "exactly", false},
		{"abcdef", 3, "abc", true},
		{"가나다", 4, "가", true}, // 3 bytes a syllable: not half of the second
		{"🚀🚀", 7, "🚀", true},
	}
	for _, tt := range tests {
		got, cut := cutText(tt.s, tt.max)
		if got != tt.want || cut != tt.wantCut || !utf8.ValidString(got) {
			t.Errorf("cutText(%q, %d) = %q, %v; want %q, %v", tt.s, tt.max, got, cut, tt.want, tt.wantCut)
		}
	}
}

// answer returns about size bytes of plan-like prose, twelve words a
// line, from seed.
func answer(seed uint64, size int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := strings.Fields("the config parser reads an empty file and returns defaults when no settings exist; " +
		"a mapping check raises ConfigError for scalar documents such as true or 42. tests cover both cases, " +
		"and the changelog notes the fix. reviewer approves once the regression test passes on main.")
	var b strings.Builder
	for b.Len() < size {
		for range 12 {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteByte(' ')
		}
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkWordDiff60KB diffs two unrelated 60 KB answers of the same
// vocabulary: the worst case of a real comparison (every line differs, a
// few words match everywhere), which reaches the diff's timeout.
func BenchmarkWordDiff60KB(b *testing.B) {
	x, y := answer(1, 60<<10), answer(2, 60<<10)
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		wordDiff(x, y)
	}
}

// BenchmarkWordDiff10KB diffs two unrelated 10 KB answers, the size of
// two planners' plans.
func BenchmarkWordDiff10KB(b *testing.B) {
	x, y := answer(1, 10<<10), answer(2, 10<<10)
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		wordDiff(x, y)
	}
}

// BenchmarkWordDiff60KBEdited diffs a 60 KB answer with itself, a few
// words changed: two rounds of one plan.
func BenchmarkWordDiff60KBEdited(b *testing.B) {
	x := answer(1, 60<<10)
	y := strings.Replace(strings.Replace(x, "parser", "loader", 5), "approves", "rejects", 3)
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		wordDiff(x, y)
	}
}

// BenchmarkWordDiffCapScattered diffs a 200 KB answer with itself, every
// tenth word changed: every line edited in place.
func BenchmarkWordDiffCapScattered(b *testing.B) {
	x := answer(1, compareMaxBytes)
	words := strings.Split(x, " ")
	for i := 0; i < len(words); i += 10 {
		if !strings.Contains(words[i], "\n") {
			words[i] = "changed"
		}
	}
	y := strings.Join(words, " ")
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		wordDiff(x, y)
	}
}

// BenchmarkWordDiffCapRepetitive diffs two answers of the largest size
// compared, one repeated word, one side shifted by a word: the text on
// which a half-match search would cost the product of the lengths.
func BenchmarkWordDiffCapRepetitive(b *testing.B) {
	long := strings.Repeat("word ", compareMaxBytes/5)
	x, _ := cutText(long, compareMaxBytes)
	y, _ := cutText("changed "+long, compareMaxBytes)
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		wordDiff(x, y)
	}
}
