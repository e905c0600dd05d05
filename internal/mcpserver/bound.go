package mcpserver

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/convtrace/convtrace/viewer/query"
)

// MaxAnswerBytes bounds what one tool call sends: the answer's JSON twice,
// as the SDK sends it (structured content, and the same JSON as text for
// clients that read text only). A tool shrinks its answer to fit (shorter
// texts, then fewer items) and says so.
const MaxAnswerBytes = 256 << 10

// answerBytes is what out costs on the wire: its JSON, and that JSON
// again as a JSON string.
func answerBytes(out any) int {
	b, err := json.Marshal(out)
	if err != nil {
		return 0 // the SDK reports the marshalling error itself
	}
	quoted, _ := json.Marshal(string(b))
	return len(b) + len(quoted)
}

// Bounds of a text's cut (text_bytes): the shrinking of an answer halves
// it down to minTextBytes.
const (
	minTextBytes = 256
	maxTextBytes = 64 << 10
)

// cutText returns the first n bytes of s, without a character cut in two,
// and whether it cut anything.
func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// textBytes reads a text_bytes argument: 0 is def.
func textBytes(n, def int) (int, error) {
	return inRange("text_bytes", n, def, minTextBytes, maxTextBytes)
}

// inRange reads a count argument: 0 is def, else it must lie in [lo, hi].
func inRange(param string, n, def, lo, hi int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < lo || n > hi:
		return 0, query.BadParam(param, "%d is not a number from %d to %d", n, lo, hi)
	}
	return n, nil
}

// shrink calls build with a text cut of n bytes, halving n down to
// minTextBytes, then with fewer items (dropping the first: the oldest)
// until the answer fits MaxAnswerBytes; build gets how many items to drop.
// It returns the first answer that fits, or the smallest.
func shrink[T any](n, items int, build func(textBytes, drop int) T) T {
	out := build(n, 0)
	for n > minTextBytes && answerBytes(out) > MaxAnswerBytes {
		n = max(n/2, minTextBytes)
		out = build(n, 0)
	}
	for drop := 0; drop < items && answerBytes(out) > MaxAnswerBytes; {
		drop += max((items-drop)/4, 1)
		out = build(n, drop)
	}
	return out
}
