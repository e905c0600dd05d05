package viewer

import (
	"slices"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
)

// A card shows the start of a long text, at most previewRunes characters
// and previewLines lines; "Show full" loads the rest. So a page of a
// thousand 60 KB turns weighs what one of short turns does.
const (
	previewRunes = 2000
	previewLines = 30
)

// parentVerbs says how a turn relates to the turn it threads under, by the
// turn's own phase.
var parentVerbs = map[string]string{
	"review":     "reviews",
	"verify":     "verifies",
	"revision":   "revises",
	"critique":   "critiques",
	"adjudicate": "adjudicates",
}

type turnView struct {
	store.Turn
	Text     preview       // the content, unless it is messages
	Messages []messageView // the content when it is chat messages JSON
	Args     []argView     // the content of a tool call: its arguments
	// Earlier counts the leading messages that repeat history an earlier
	// turn showed: not on the page, behind "N earlier messages".
	Earlier int
	// Cut says the card shows only the start of the turn: a message or
	// the text is cut, a message is left out, or the page read a prefix.
	Cut    bool
	Failed bool // role error or status error
	// PairID is the other half of a tool call and its result, on this
	// page; PairVerb says which half it is.
	PairID, PairVerb, PairLabel string
}

// messageView is one chat message of a turn: its text (what was said),
// split at search matches, and its tool calls.
type messageView struct {
	Role  string
	Text  preview
	Calls []toolCallView
}

// preview is the start of a text as a card shows it, split at search
// matches; Cut says there is more.
type preview struct {
	Segs []Segment
	Cut  bool
}

// newPreview returns the start of text a card shows, marked where q
// matches.
func newPreview(text, q string) preview {
	shown, cut := previewOf(text)
	return preview{Segs: highlight(shown, q), Cut: cut}
}

// Empty says there is no text to show.
func (p preview) Empty() bool {
	for _, s := range p.Segs {
		if s.Text != "" {
			return false
		}
	}
	return !p.Cut
}

// previewOf returns the start of s a card shows and whether it is cut.
func previewOf(s string) (string, bool) {
	lines, runes := 0, 0
	for i, r := range s {
		if lines >= previewLines || runes >= previewRunes {
			return s[:i], true
		}
		if r == '\n' {
			lines++
		}
		runes++
	}
	return s, false
}

// ShowContent says whether the content adds anything to the error message
// shown above it (an error turn's content is usually its message).
func (t turnView) ShowContent() bool {
	return t.Content != "" && (!t.Failed || strings.TrimSpace(t.Content) != strings.TrimSpace(t.Error))
}

// turnBuilder makes the views of a page's turns, in the order they were
// said: what a turn shows depends on the turns before it (history already
// shown) and around it (its tool call or result).
type turnBuilder struct {
	q       string
	byID    map[string]*store.Turn
	calls   map[string]*store.Turn // tool calls by tool_call_id
	results map[string]*store.Turn // tool results by tool_call_id
	seen    map[string]bool        // messages the page showed so far, by messageKey
	full    bool                   // show every message whole: no preview, no earlier
}

func newTurnBuilder(turns []store.Turn, q string) *turnBuilder {
	b := &turnBuilder{
		q:       q,
		byID:    make(map[string]*store.Turn, len(turns)),
		calls:   map[string]*store.Turn{},
		results: map[string]*store.Turn{},
		seen:    map[string]bool{},
	}
	for i := range turns {
		t := &turns[i]
		b.byID[t.TurnID] = t
		if t.ToolCallID == "" {
			continue
		}
		switch t.Role {
		case schema.RoleToolCall:
			b.calls[t.ToolCallID] = t
		case schema.RoleToolResult, schema.RoleToolResultError:
			b.results[t.ToolCallID] = t
		}
	}
	return b
}

// messageKey identifies a message when looking for repeated history.
func messageKey(role, text string) string { return role + "\x00" + strings.TrimSpace(text) }

// view returns the view of t; call it for each turn in the order said.
func (b *turnBuilder) view(t store.Turn) turnView {
	tv := turnView{Turn: t, Failed: t.Failed(), Cut: t.ContentCut}
	msgs, rest, complete := genai.DecodePrefix(t.Content)
	// A page reads the start of a long turn: its last message may be cut.
	partial := t.ContentCut && !complete && genai.RoleOf(rest) != ""
	if len(msgs) > 0 && (complete || t.ContentCut) || partial {
		b.messages(&tv, msgs)
		if partial {
			text, _ := previewOf(store.FragmentText(rest))
			tv.Messages = append(tv.Messages, messageView{Role: genai.RoleOf(rest), Text: preview{Segs: highlight(text, b.q), Cut: true}})
		}
	} else if t.Role == schema.RoleToolCall && !t.ContentCut {
		tv.Args = b.args([]byte(t.Content))
		for _, a := range tv.Args {
			tv.Cut = tv.Cut || a.Value.Cut
		}
	} else {
		tv.Text = b.preview(t.Content)
		tv.Cut = tv.Cut || tv.Text.Cut
		switch t.Role {
		case schema.RoleResponse:
			// The next prompt repeats an answer as the assistant's message,
			b.seen[messageKey("assistant", t.Content)] = true
		case schema.RoleToolResult, schema.RoleToolResultError:
			// and a tool's result as a tool message.
			b.seen[messageKey("tool", genai.Message{Role: "tool", Parts: []genai.Part{genai.ToolResponse(t.ToolCallID, t.Content)}}.Text())] = true
		}
	}
	if t.ToolCallID != "" {
		var (
			pair *store.Turn
			verb string
		)
		switch t.Role {
		case schema.RoleToolCall:
			pair, verb = b.results[t.ToolCallID], "result"
		case schema.RoleToolResult, schema.RoleToolResultError:
			pair, verb = b.calls[t.ToolCallID], "result of"
		}
		if pair != nil {
			tv.PairID, tv.PairVerb, tv.PairLabel = pair.TurnID, verb, turnLabel(pair)
			if pair.ToolName != "" {
				tv.PairLabel += " · " + pair.ToolName
			}
		}
	}
	return tv
}

// messages fills tv with msgs: the history the page showed already (or
// that the store keeps apart) counted as earlier, the rest as messages.
func (b *turnBuilder) messages(tv *turnView, msgs []genai.Message) {
	texts, keys := make([]string, len(msgs)), make([]string, len(msgs))
	for i, m := range msgs {
		texts[i], keys[i] = m.Said(), messageKey(m.Role, m.Text())
	}
	earlier := 0
	for !b.full && earlier < len(msgs)-1 && b.seen[keys[earlier]] {
		earlier++
	}
	if !b.full {
		tv.Earlier = len(tv.History) + earlier
	}
	for i, m := range msgs {
		b.seen[keys[i]] = true
		if i < earlier {
			continue
		}
		mv := messageView{Role: roleLabel(m), Text: b.preview(texts[i])}
		for _, p := range m.Parts {
			switch p.Type {
			case genai.PartToolCall:
				mv.Calls = append(mv.Calls, b.toolCall(p))
			case genai.PartToolResponse:
				if texts[i] == "" {
					mv.Text = b.preview(genai.String(p.Response))
				}
			}
		}
		tv.Cut = tv.Cut || mv.Text.Cut
		tv.Messages = append(tv.Messages, mv)
	}
}

// preview is the start of text, or all of it on a full view.
func (b *turnBuilder) preview(text string) preview {
	if b.full {
		return preview{Segs: highlight(text, b.q)}
	}
	return newPreview(text, b.q)
}

// turnLabel names a turn in a link to it: who said it, and what.
func turnLabel(t *store.Turn) string {
	parts := slices.DeleteFunc([]string{speakerOf(t.Turn), t.Phase, t.Role}, func(s string) bool { return s == "" })
	return strings.Join(parts, " · ")
}

// speakerOf names who said t: its speaker, else its agent, else its model.
func speakerOf(t schema.Turn) string {
	for _, who := range []string{t.Speaker, t.Agent, t.Model} {
		if who != "" {
			return who
		}
	}
	return ""
}
