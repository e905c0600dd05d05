package store

import (
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
)

// FragmentText is the text of a window cut out of messages JSON (a turn
// too long to read whole for a search hit): the string values, unescaped,
// without keys, structure or the values of keys that only label (role,
// type, ids). A window that does not look like JSON is returned as it is.
// The window may start or end inside a string: text before the first
// quote is kept when nothing structural stands just before that quote,
// and a string the window cuts short is kept up to the cut.
func FragmentText(s string) string {
	if !strings.Contains(s, `":`) {
		return s
	}
	var (
		kept []string
		key  string
		pos  int
	)
	first := nextQuote(s, 0)
	if first < 0 {
		return s
	}
	if lead := strings.TrimRight(s[:first], " \t\r\n"); lead != "" && !strings.ContainsAny(lead[len(lead)-1:], "{[,:") {
		// The window starts inside a string, a value unless a colon
		// follows: its end is this quote.
		pos = first + 1
		if !strings.HasPrefix(strings.TrimLeft(s[pos:], " \t\r\n"), ":") {
			kept = append(kept, unescapeJSON(s[:first]))
		}
	} else {
		pos = first
	}
	for pos < len(s) {
		open := nextQuote(s, pos)
		if open < 0 {
			break
		}
		end := nextQuote(s, open+1)
		if end < 0 {
			kept = append(kept, unescapeJSON(s[open+1:])) // cut by the window
			break
		}
		lit := unescapeJSON(s[open+1 : end])
		pos = end + 1
		rest := strings.TrimLeft(s[pos:], " \t\r\n")
		switch {
		case strings.HasPrefix(rest, ":"):
			key = lit
		case !labelKeys[key] && strings.TrimSpace(lit) != "":
			kept = append(kept, lit)
		}
	}
	return strings.Join(kept, " ")
}

// labelKeys are the keys of messages JSON whose values label a message or
// a part rather than say anything.
var labelKeys = map[string]bool{"role": true, "type": true, "id": true, "tool_call_id": true, "call_id": true, "finish_reason": true, "mime_type": true}

// nextQuote is the index of the next double quote from i that no
// backslash escapes, or -1.
func nextQuote(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unescapeJSON undoes JSON string escapes; an escape the window cut in two
// is dropped.
func unescapeJSON(lit string) string {
	if u, err := strconv.Unquote(`"` + lit + `"`); err == nil && !strings.Contains(lit, `\u`) {
		return u
	}
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' || i+1 >= len(lit) {
			if lit[i] != '\\' {
				b.WriteByte(lit[i])
			}
			continue
		}
		i++
		switch lit[i] {
		case 'n', 'r', 't':
			b.WriteByte(' ')
		case 'u':
			if i+4 < len(lit) {
				if r, err := strconv.ParseUint(lit[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
				}
				i += 4
			} else {
				i = len(lit)
			}
		default:
			b.WriteByte(lit[i])
		}
	}
	return b.String()
}

// messagesText is the text of the messages content holds when it is the
// turn's whole content (whole), messages JSON, and that text holds q (any
// case; a search without text, q "", wants it not empty); else false, and
// the hit shows the window around the match.
func messagesText(content, q string, whole bool) (string, bool) {
	if !whole {
		return "", false
	}
	ms, ok := genai.Parse(content)
	if !ok {
		return "", false
	}
	texts := make([]string, 0, len(ms))
	for _, m := range ms {
		if t := m.Text(); t != "" {
			texts = append(texts, t)
		}
	}
	text := strings.Join(texts, "\n")
	return text, text != "" && strings.Contains(strings.ToLower(text), strings.ToLower(q))
}
