package viewer

import (
	"unicode/utf8"

	"github.com/convtrace/convtrace/store"
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
		if n := store.FoldPrefix(text[i:], q); n > 0 {
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

// snippet is store.Snippet of text split into highlight segments.
func snippet(text, q string) []Segment {
	return highlight(store.Snippet(text, q), q)
}
