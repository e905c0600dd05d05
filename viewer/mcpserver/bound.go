package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/store/page"
)

// MaxAnswerBytes bounds every message the server sends: Transport sends
// an error in place of a longer answer.
const MaxAnswerBytes = 256 << 10

// maxToolBytes bounds a tool's answer as answerBytes counts it: the
// answer's JSON twice, as the SDK sends it (structured content, and the
// same JSON as text for clients that read text only), with room left for
// the JSON-RPC envelope and its id of at most maxIDBytes. A tool shrinks
// its answer to fit (shorter texts, then fewer items) and says so.
const maxToolBytes = MaxAnswerBytes - 1<<10

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

// textBytes reads a text_bytes argument: absent is def.
func textBytes(n *int, def int) (int, error) {
	return inRange("text_bytes", n, def, minTextBytes, maxTextBytes)
}

// inRange reads a count argument: absent is def, else it must lie in
// [lo, hi] (0 too is refused, not taken for the default).
func inRange(param string, n *int, def, lo, hi int) (int, error) {
	switch {
	case n == nil:
		return def, nil
	case *n < lo || *n > hi:
		return 0, page.BadParam(param, "%d is not a number from %d to %d (leave it out for %d)", *n, lo, hi, def)
	}
	return *n, nil
}

// shrink calls build with a text cut of n bytes, halving n down to
// minTextBytes, then with fewer items (dropping the first: the oldest)
// until the answer fits maxToolBytes; build gets how many items to drop.
// It returns the first answer that fits, or the smallest.
func shrink[T any](n, items int, build func(textBytes, drop int) T) T {
	out := build(n, 0)
	for n > minTextBytes && answerBytes(out) > maxToolBytes {
		n = max(n/2, minTextBytes)
		out = build(n, 0)
	}
	for drop := 0; drop < items && answerBytes(out) > maxToolBytes; {
		drop += max((items-drop)/4, 1)
		out = build(n, drop)
	}
	return out
}

// Bounds of every argument, set in the tools' input schemas: the SDK
// refuses a longer text or list before a tool runs, so no argument reaches
// a query unbounded, and a client reads the bounds in the schema.
const (
	maxArgRunes = 1000
	maxArgItems = 32
)

// boundArgs sets maxLength on each text property of s, its lists' items
// included, and maxItems on each list.
func boundArgs(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		if p.Type == "array" || slices.Contains(p.Types, "array") {
			p.MaxItems = jsonschema.Ptr(maxArgItems)
			p = p.Items
		}
		if p != nil && (p.Type == "string" || slices.Contains(p.Types, "string")) {
			p.MaxLength = jsonschema.Ptr(maxArgRunes)
		}
	}
}

// maxErrorBytes bounds the text of an error answer: the SDK's checks quote
// the value they refuse, however long.
const maxErrorBytes = 512

// cutMiddle returns s when it holds at most n bytes, else its start and its
// end with what was left out said between them: an error names what it
// refuses first and says why last.
func cutMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, _ := cutText(s, n/2)
	i := len(s) - n/2
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return fmt.Sprintf("%s … [%d bytes left out] … %s", head, i-len(head), s[i:])
}

// cutToolErrors cuts the text of each tool error to maxErrorBytes: those
// of the SDK's argument checks as well as the tools' own.
func cutToolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = cutMiddle(t.Text, maxErrorBytes)
				}
			}
		}
		return res, err
	}
}

// oneType gives every property of s one JSON type: a pointer or a slice
// is inferred as ["null", T], which single-type schema dialects refuse;
// an argument left out is how a tool is told "none".
func oneType(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
			p.Type = p.Types[0]
			if p.Type == "null" {
				p.Type = p.Types[1]
			}
			p.Types = nil
		}
	}
}

// decodeArgs reads a tool's arguments into In: a value of the wrong type
// or an argument In does not have is refused, naming it, and so is one
// past the bounds of the tool's input schema.
func decodeArgs[In any](raw json.RawMessage, bounds *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		// The bounds are checked on the arguments as read, a list given as
		// one string ("by": "phase") already a list.
		b, err := json.Marshal(in)
		if err != nil {
			return in, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return in, err
		}
		if err := bounds.Validate(m); err != nil {
			return in, fmt.Errorf("bad argument: %v", err)
		}
		return in, nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return in, fmt.Errorf("bad argument %s: a JSON %s where %s belongs", typeErr.Field, typeErr.Value, jsonKind(typeErr.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return in, fmt.Errorf("unknown argument %s: the tool's input schema lists its arguments", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return in, fmt.Errorf("the arguments are not a JSON object of the tool's arguments: %v", err)
}

// jsonKind names what a Go type takes in JSON.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(jsonKind(t.Elem()), "a ") + "s"
	case reflect.String:
		return "a string"
	}
	return "a " + t.Kind().String()
}

// words is a list of names given as a JSON array or as one string of
// names separated by commas ("by": "phase" or "day,model").
type words []string

func (w *words) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*w = nil
		for _, v := range strings.Split(one, ",") {
			if v = strings.TrimSpace(v); v != "" {
				*w = append(*w, v)
			}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return &json.UnmarshalTypeError{Value: "value", Type: reflect.TypeFor[[]string]()}
	}
	*w = list
	return nil
}
