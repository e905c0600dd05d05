package viewer

import (
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// turnMarkdown writes one turn as markdown: a heading naming who said it,
// in which phase and round, then its content in a code fence (chat
// messages one fence each, under their role), so that nothing the model
// wrote is read as markdown.
func turnMarkdown(t store.Turn) string {
	var b strings.Builder
	b.WriteString("### " + turnHeading(t) + "\n\n")
	if t.Failed() {
		if msg := strings.TrimSpace(t.Error); msg != "" {
			b.WriteString("> Error: " + strings.Join(strings.Fields(msg), " ") + "\n\n")
			if strings.TrimSpace(t.Content) == msg {
				return b.String()
			}
		}
	}
	if msgs, ok := genai.Decode(t.Content); ok {
		for _, m := range msgs {
			b.WriteString("**" + roleLabel(m) + "**\n\n" + fenced(m.Text()) + "\n")
		}
		return b.String()
	}
	if t.Content != "" {
		b.WriteString(fenced(t.Content) + "\n")
	}
	return b.String()
}

// turnHeading is who said a turn, its phase (and round) and role, and the
// model: the heading of the turn in markdown, on one line.
func turnHeading(t store.Turn) string {
	who := strings.TrimSpace(t.Speaker)
	if who == "" {
		who = strings.TrimSpace(t.Agent)
	}
	if who == "" {
		who = unknown
	}
	parts := []string{who}
	if p := strings.TrimSpace(t.Phase); p != "" {
		key := strings.ToLower(p)
		if t.Round > 0 {
			p = page.PhaseName(key, p) + " (round " + strconv.Itoa(int(t.Round)) + ")"
		} else {
			p = page.PhaseName(key, p)
		}
		parts = append(parts, p)
	}
	if t.Role != "" {
		parts = append(parts, t.Role)
	}
	h := strings.Join(parts, " · ")
	if t.Model != "" {
		h += " (" + t.Model + ")"
	}
	return strings.Join(strings.Fields(h), " ")
}

// threadMarkdown writes a thread's turns as markdown under its title.
func threadMarkdown(th store.Thread, turns []store.Turn) string {
	var b strings.Builder
	b.WriteString("# " + strings.Join(strings.Fields(th.Title), " ") + "\n")
	for i, t := range turns {
		if i == 0 {
			b.WriteString("\n") // each turn ends in a blank line
		}
		b.WriteString(turnMarkdown(t))
	}
	return b.String()
}

// fenced puts s in a code fence longer than any run of backticks in it, so
// that content holding ``` cannot close the fence.
func fenced(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
