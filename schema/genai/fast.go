package genai

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fast path: a direct parser and writer for messages of text and
// reasoning parts only, the shape most arrive in. Anything else takes the
// general path, which gives the same result (TestFastPathMatchesGeneral).
// Why: docs/design/messages.md.

// parseTextMessages reads s when it is a JSON array of messages with text
// and reasoning parts only; ok is false for anything else.
func parseTextMessages(s string) (ms []Message, ok bool) {
	r := reader{s: s}
	if !r.byte('[') {
		return nil, false
	}
	if r.byte(']') {
		return []Message{}, r.end()
	}
	for {
		m, ok := r.message()
		if !ok {
			return nil, false
		}
		ms = append(ms, m)
		if r.byte(']') {
			return ms, r.end()
		}
		if !r.byte(',') {
			return nil, false
		}
	}
}

// reader reads JSON text from s at i, skipping insignificant space.
type reader struct {
	s string
	i int
}

func (r *reader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// byte consumes c, after space, when it comes next.
func (r *reader) byte(c byte) bool {
	r.space()
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *reader) end() bool {
	r.space()
	return r.i == len(r.s)
}

// object reads an object whose values field reads, each key at most once.
func (r *reader) object(field func(key string) bool) bool {
	if !r.byte('{') {
		return false
	}
	if r.byte('}') {
		return true
	}
	var seen []string
	for {
		key, ok := r.string()
		if !ok || !r.byte(':') {
			return false
		}
		for _, k := range seen {
			if k == key {
				return false
			}
		}
		seen = append(seen, key)
		if !field(key) {
			return false
		}
		if r.byte('}') {
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

func (r *reader) message() (Message, bool) {
	var m Message
	hasParts := false
	ok := r.object(func(key string) (ok bool) {
		switch key {
		case "role":
			m.Role, ok = r.string()
		case "finish_reason":
			m.FinishReason, ok = r.string()
		case "parts":
			hasParts = true
			m.Parts, ok = r.parts()
		}
		return ok
	})
	return m, ok && hasParts
}

func (r *reader) parts() ([]Part, bool) {
	if !r.byte('[') {
		return nil, false
	}
	parts := []Part{}
	if r.byte(']') {
		return parts, true
	}
	for {
		var p Part
		hasContent := false
		ok := r.object(func(key string) (ok bool) {
			switch key {
			case "type":
				p.Type, ok = r.string()
			case "content":
				hasContent = true
				p.Content, ok = r.string()
			}
			return ok
		})
		if !ok || !hasContent || (p.Type != PartText && p.Type != PartReasoning) {
			return nil, false
		}
		parts = append(parts, p)
		if r.byte(']') {
			return parts, true
		}
		if !r.byte(',') {
			return nil, false
		}
	}
}

// string reads a JSON string. Its value is a substring of s when it has
// no escape. ok is false on what the decoder would repair rather than
// read (invalid UTF-8, a surrogate escape), so that the general path
// handles it.
func (r *reader) string() (string, bool) {
	if !r.byte('"') {
		return "", false
	}
	start := r.i
	var b *strings.Builder
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			v := r.s[start:r.i]
			r.i++
			if b != nil {
				b.WriteString(v)
				return b.String(), true
			}
			return v, true
		case c < 0x20:
			return "", false
		case c == '\\':
			if b == nil {
				b = &strings.Builder{}
			}
			b.WriteString(r.s[start:r.i])
			n, ok := unescape(b, r.s[r.i:])
			if !ok {
				return "", false
			}
			r.i += n
			start = r.i
		case c < utf8.RuneSelf:
			r.i++
		default:
			c, n := utf8.DecodeRuneInString(r.s[r.i:])
			if c == utf8.RuneError && n == 1 {
				return "", false
			}
			r.i += n
		}
	}
	return "", false
}

// unescape writes the character of the escape s starts with, returning
// the escape's length.
func unescape(b *strings.Builder, s string) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		if len(s) < 6 {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		if err != nil || (v >= 0xd800 && v < 0xe000) {
			return 0, false
		}
		b.WriteRune(rune(v))
		return 6, true
	default:
		return 0, false
	}
	return 2, true
}

// appendTextMessages appends ms as Render writes them, when their parts
// are all text or reasoning; ok is false otherwise, with dst unchanged.
func appendTextMessages(dst []byte, ms []Message) ([]byte, bool) {
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.Type != PartText && p.Type != PartReasoning {
				return dst, false
			}
		}
	}
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":`...)
		dst = appendString(dst, m.Role)
		dst = append(dst, `,"parts":[`...)
		for j, p := range m.Parts {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":`...)
			dst = appendString(dst, p.Type)
			dst = append(dst, `,"content":`...)
			dst = appendString(dst, p.Content)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
		if m.FinishReason != "" {
			dst = append(dst, `,"finish_reason":`...)
			dst = appendString(dst, m.FinishReason)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// appendString appends s as a JSON string exactly as Marshal writes it:
// encoding/json's escapes without HTML escaping, invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
