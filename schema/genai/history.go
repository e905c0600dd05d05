package genai

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
)

// History stored once: SplitHistory cuts a prompt after its last assistant
// message, so the history an agent's loop repeats is stored once per
// message (docs/design/messages.md); JoinHistory undoes it, byte for byte.

// SplitHistory splits content, a prompt as Render writes it, after its last
// assistant message: earlier are the messages up to it, each its JSON text
// exactly as in content, rest the JSON of the others ("[]" for none), and
// JoinHistory(earlier, rest) == content. ok is false, and content is stored
// whole, when it is not such an array or has no assistant message.
func SplitHistory(content string) (earlier []string, rest string, ok bool) {
	bounds, ok := messageBounds(content)
	if !ok {
		return nil, "", false
	}
	last := -1
	for i := range bounds {
		if RoleOf(content[bounds[i][0]:bounds[i][1]]) == "assistant" {
			last = i
		}
	}
	if last < 0 {
		return nil, "", false
	}
	earlier = make([]string, last+1)
	for i := range earlier {
		earlier[i] = content[bounds[i][0]:bounds[i][1]]
	}
	if last == len(bounds)-1 {
		return earlier, "[]", true
	}
	return earlier, "[" + content[bounds[last+1][0]:], true
}

// JoinHistory is the stored prompt whose history is earlier and whose new
// messages are rest, the inverse of SplitHistory.
func JoinHistory(earlier []string, rest string) string {
	s, _ := JoinHistoryPrefix(earlier, rest, false, math.MaxInt)
	return s
}

// JoinHistoryPrefix returns JoinHistory(earlier, rest) cut to at most
// limit bytes, and whether it is cut. restCut says rest is itself only the
// start of the stored rest, as a page reads a long prompt: the result is
// then the start of the whole prompt, cut.
func JoinHistoryPrefix(earlier []string, rest string, restCut bool, limit int) (string, bool) {
	if len(earlier) == 0 {
		return rest[:min(len(rest), limit)], restCut || len(rest) > limit
	}
	var b strings.Builder
	n := len(rest)
	for _, m := range earlier {
		n += len(m) + 1
	}
	b.Grow(min(n, limit))
	b.WriteByte('[')
	for i, m := range earlier {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m[:min(len(m), limit-b.Len()+1)])
		if b.Len() > limit {
			return b.String()[:limit], true
		}
	}
	// A rest cut right after its "[" may go on with a message or end:
	// the history alone is the start of the prompt either way.
	switch inner := strings.TrimPrefix(rest, "["); {
	case inner != "" && (restCut || inner != "]"):
		b.WriteByte(',')
		b.WriteString(inner[:min(len(inner), max(0, limit-b.Len()+1))])
	case !restCut:
		b.WriteByte(']')
	}
	if b.Len() > limit {
		return b.String()[:limit], true
	}
	return b.String(), restCut
}

// MessageID is the id a message's JSON text is stored under: the first 16
// bytes of its SHA-256, in hex.
func MessageID(message string) string {
	sum := sha256.Sum256([]byte(message))
	return hex.EncodeToString(sum[:16])
}

// messageBounds returns the start and end of each element of content, a
// JSON array of objects as Render writes it: no space between elements,
// each an object that begins with its role. Strings are skipped with their
// escapes, so brackets and commas inside them do not count.
func messageBounds(content string) ([][2]int, bool) {
	if len(content) < 2 || content[0] != '[' || content[len(content)-1] != ']' || content[1] != '{' {
		return nil, false
	}
	var bounds [][2]int
	depth, start := 0, 1
	for i := 1; i < len(content)-1; i++ {
		switch content[i] {
		case '"':
			for i++; i < len(content) && content[i] != '"'; i++ {
				if content[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, false
			}
		case ',':
			if depth == 0 {
				if i+1 >= len(content) || content[i+1] != '{' {
					return nil, false
				}
				bounds = append(bounds, [2]int{start, i})
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, false
	}
	return append(bounds, [2]int{start, len(content) - 1}), true
}

// RoleOf is the role of one stored message, "" when it does not begin
// with one.
func RoleOf(message string) string {
	const prefix = `{"role":"`
	if !strings.HasPrefix(message, prefix) {
		return ""
	}
	role, _, ok := strings.Cut(message[len(prefix):], `"`)
	if !ok {
		return ""
	}
	return role
}
