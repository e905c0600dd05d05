package viewer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
)

// DetailMessage is one chat message as the detail pane shows it: who said
// it and its parts, tool calls and results pretty-printed.
type DetailMessage struct {
	Role  string       `json:"role"`
	Parts []DetailPart `json:"parts"`
}

// Kinds of a DetailPart.
const (
	partText       = "text"
	partReasoning  = "reasoning"
	partToolCall   = "tool_call"
	partToolResult = "tool_result"
	partOther      = "other"
)

// DetailPart is one part of a message. Text is what was said, or a tool
// call's arguments or a tool result as indented JSON (a JSON string as its
// text, line breaks and all); Blocks repeats the multi-line string fields
// of that JSON (a patch, a file) as text, which JSON shows on one line.
type DetailPart struct {
	Kind   string        `json:"kind"`
	Text   string        `json:"text"`
	Name   string        `json:"name,omitempty"` // a tool call's tool; another part's type
	ID     string        `json:"id,omitempty"`   // the tool call's id
	Blocks []DetailBlock `json:"blocks,omitempty"`
}

// DetailBlock is a multi-line string field of a JSON value.
type DetailBlock struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// detailMessages returns ms as the pane shows them.
func detailMessages(ms []genai.Message) []DetailMessage {
	out := make([]DetailMessage, len(ms))
	for i, m := range ms {
		dm := DetailMessage{Role: roleLabel(m), Parts: make([]DetailPart, 0, len(m.Parts))}
		for _, p := range m.Parts {
			dm.Parts = append(dm.Parts, detailPart(p))
		}
		out[i] = dm
	}
	return out
}

func detailPart(p genai.Part) DetailPart {
	switch p.Type {
	case genai.PartText:
		return DetailPart{Kind: partText, Text: p.Content}
	case genai.PartReasoning:
		return DetailPart{Kind: partReasoning, Text: p.Content}
	case genai.PartToolCall:
		text, blocks := prettyJSON(p.Arguments)
		return DetailPart{Kind: partToolCall, Name: p.Name, ID: p.ID, Text: text, Blocks: blocks}
	case genai.PartToolResponse:
		text, blocks := prettyJSON(p.Response)
		return DetailPart{Kind: partToolResult, ID: p.ID, Text: text, Blocks: blocks}
	}
	text, _ := prettyJSON(p.Raw)
	return DetailPart{Kind: partOther, Name: p.Type, Text: text}
}

// prettyJSON shows a JSON value to a reader: a string as its text, any
// other value indented, with its multi-line string fields as blocks; text
// that is not JSON as written.
func prettyJSON(raw json.RawMessage) (string, []DetailBlock) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // numbers as written
	var v any
	if d.Decode(&v) != nil || d.More() {
		return string(raw), nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false) // escaped where shown
	e.SetIndent("", "  ")
	if e.Encode(v) != nil {
		return string(raw), nil
	}
	return strings.TrimSuffix(b.String(), "\n"), multiLineFields(v)
}

// multiLineFields returns the string fields of an object that hold a line
// break, by key, sorted: the arguments of an edit or patch tool.
func multiLineFields(v any) []DetailBlock {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var blocks []DetailBlock
	for k, f := range obj {
		if s, ok := f.(string); ok && strings.Contains(s, "\n") {
			blocks = append(blocks, DetailBlock{Key: k, Text: s})
		}
	}
	slices.SortFunc(blocks, func(a, b DetailBlock) int { return strings.Compare(a.Key, b.Key) })
	return blocks
}

// turnBody reads a turn's content as the pane shows it: chat messages,
// the first earlier of them the history a prompt repeats; else text,
// indented when it is JSON.
func turnBody(content string, earlier int) (history, msgs []DetailMessage, text string, blocks []DetailBlock) {
	if ms, ok := genai.Decode(content); ok {
		all := detailMessages(ms)
		n := min(earlier, len(all))
		return all[:n], all[n:], "", nil
	}
	if t := strings.TrimSpace(content); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		text, blocks = prettyJSON(json.RawMessage(t))
		return nil, nil, text, blocks
	}
	return nil, nil, content, nil
}
