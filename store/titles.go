package store

import (
	"strings"
	"unicode/utf8"

	"github.com/convtrace/convtrace/schema/genai"
)

const (
	// titleRunes is how long a title taken from a thread's first prompt may be.
	titleRunes = 80
	// previewRunes is how long a thread's one-line preview may be.
	previewRunes = 120
)

// threadTitle is the user's override when there is one, else the first
// non-empty line of the first prompt (its user message when it is messages
// JSON) cut to titleRunes runes (with … when cut), else the thread id.
func threadTitle(override, firstPrompt, id string) string {
	if t := strings.TrimSpace(override); t != "" {
		return t
	}
	if t := oneLine(firstLine(promptText(firstPrompt)), titleRunes); t != "" {
		return t
	}
	return id
}

// firstLine is text's first line that is not blank.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// oneLine puts text on one line, runs of white space becoming one space,
// and cuts it to at most n runes, ending with … when cut.
func oneLine(text string, n int) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= n {
		return t
	}
	return string([]rune(t)[:n]) + "…"
}

// promptText is what a title shows of a first prompt: when it is messages
// JSON, the first user message (else the first message) that decodes from
// the prefix given; else the prompt as written.
func promptText(prefix string) string {
	msgs, _ := genai.Decode(prefix)
	for _, m := range msgs {
		if text := m.Text(); m.Role == "user" && text != "" {
			return text
		}
	}
	for _, m := range msgs {
		if text := m.Text(); text != "" {
			return text
		}
	}
	return prefix
}
