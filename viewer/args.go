package viewer

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
)

// toolCallView is a tool call an answer asked for: its name, its
// arguments pretty-printed, and the call that ran it when the page has it
// (its result shows under the call).
type toolCallView struct {
	ID, Name string
	Args     []argView
	Run      *callView
}

// argView is one argument of a tool call: its name (none when the
// arguments are not an object) and its value. A string shows as written,
// line breaks and all, so that a patch or a file reads as code; any other
// value as indented JSON.
type argView struct {
	Name  string
	Value preview
	Code  bool // several lines: shown as a block of code
}

// toolCall returns the view of a tool call part.
func (b *turnBuilder) toolCall(p genai.Part) toolCallView {
	return toolCallView{ID: p.ID, Name: p.Name, Args: b.args(p.Arguments)}
}

// args returns the arguments of a tool call, raw JSON or text, one
// argView for each field of an object, else one for the whole.
func (b *turnBuilder) args(raw []byte) []argView {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '{' {
		if fields, ok := objectFields(raw); ok {
			out := make([]argView, 0, len(fields))
			for _, f := range fields {
				v := b.argValue(f.value)
				v.Name = f.name
				out = append(out, v)
			}
			return out
		}
	}
	return []argView{b.argValue(raw)}
}

// argValue shows one JSON value, or text that is not JSON as it is, as
// the detail pane does.
func (b *turnBuilder) argValue(raw []byte) argView {
	text, _ := prettyJSON(raw)
	return argView{Value: b.preview(text), Code: strings.Contains(text, "\n")}
}

// field is one field of a JSON object, its value as raw JSON.
type field struct {
	name  string
	value json.RawMessage
}

// objectFields returns the fields of a JSON object in the order written;
// ok is false when raw is no valid object.
func objectFields(raw []byte) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fields = append(fields, field{name, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return fields, true
}
