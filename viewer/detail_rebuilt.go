package viewer

import (
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
)

// A call's spans row does not repeat the content its turns hold
// (schema.KeyContentInTurns). The pane lists that content beside the
// row's attributes, rebuilt from the turns under the OTel GenAI names.

// RebuiltAttr is a content attribute rebuilt from one of the span's
// turns: its whole content, history put back, cut as the row's values are
// unless ?all=1 (Cut says it was cut, there or because the turn was read
// in part).
type RebuiltAttr struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	TurnID string `json:"turn_id"`
	Cut    bool   `json:"cut"`
}

// rebuiltKeys name each role's content as OTel GenAI records it; the
// roles of no content attribute (an error) are not rebuilt.
var rebuiltKeys = map[string]string{
	schema.RolePrompt:          schema.KeyInputMessages,
	schema.RoleResponse:        schema.KeyOutputMessages,
	schema.RoleToolCall:        schema.KeyToolCallArguments,
	schema.RoleToolResult:      schema.KeyToolCallResult,
	schema.RoleToolResultError: schema.KeyToolCallResult,
}

// textRoles are the message roles of a prompt and an answer stored as
// text rather than messages.
var textRoles = map[string]string{schema.RolePrompt: "user", schema.RoleResponse: "assistant"}

// rebuildContent adds the content attributes of the span's turns to
// d.Rebuilt; cut says a value was cut to store.DetailValueRunes.
func (d *SpanDetail) rebuildContent(all bool) (cut bool) {
	for _, t := range append(append([]DetailTurn(nil), d.Input...), d.Output...) {
		key, ok := rebuiltKeys[t.Role]
		if !ok || t.Content == "" {
			continue
		}
		a := RebuiltAttr{Key: key, Value: t.Content, TurnID: t.TurnID, Cut: t.ContentCut}
		if role, ok := textRoles[t.Role]; ok {
			if ms, _, complete := genai.DecodePrefix(t.Content); !complete && len(ms) == 0 {
				a.Value = genai.Render([]genai.Message{{Role: role, Parts: []genai.Part{genai.Text(t.Content)}}})
			}
		}
		if !all {
			var shortened bool
			a.Value, shortened = firstRunes(a.Value, store.DetailValueRunes)
			a.Cut = a.Cut || shortened
			cut = cut || shortened
		}
		d.Rebuilt = append(d.Rebuilt, a)
	}
	return cut
}

// firstRunes returns the first n runes of s, and whether it cut any.
func firstRunes(s string, n int) (string, bool) {
	for i := range s {
		if n == 0 {
			return s[:i], true
		}
		n--
	}
	return s, false
}
