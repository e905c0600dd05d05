package mapping

import (
	"slices"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// A call's content is stored once, in its turns (history once more in
// messages). The spans row of a span whose turns hold what it said keeps
// its other attributes and schema.KeyContentInTurns; the viewer puts the
// content back from the turns. An attribute goes only when the turns hold
// it: mapping the span without it changes what its turns say.

// contentAttr is an attribute that says what a call or a tool run said:
// one key, keys a convention reads as alternatives for the same content,
// or an indexed family (prefix, index, field) but for its field keep.
type contentAttr struct {
	keys   []string
	prefix string
	keep   string
}

// contentAttrs are the content attributes of every convention mapping
// reads. Content in events (convtrace's own, the GenAI events and log
// records) never is in a spans row, which keeps only events' names.
var contentAttrs = []contentAttr{
	{keys: []string{schema.KeyInputMessages}},
	{keys: []string{schema.KeySystemInstructions}},
	{keys: []string{schema.KeyOutputMessages}},
	{keys: []string{schema.KeyToolCallArguments}},
	{keys: []string{schema.KeyToolCallResult}},
	{prefix: olPromptPrefix},
	{prefix: olCompletionPrefix, keep: "finish_reason"},
	{keys: []string{olEntityInput}},
	{keys: []string{olEntityOutput}},
	{prefix: oiInputMessages},
	{prefix: oiOutputMessages},
	{prefix: oiPrompts},
	{prefix: oiChoices},
	{keys: []string{oiInputValue, oiToolCallArgs}},
	{keys: []string{oiOutputValue}},
	{keys: []string{vcPromptMessages, vcPrompt}},
	{keys: []string{vcResponseText, vcResponseObject}},
	{keys: []string{vcResponseTools}},
	{keys: []string{vcToolArgs, vcToolInput}},
	{keys: []string{vcToolResult, vcToolOutput}},
}

// contentAttrOf returns the index in contentAttrs of the content attribute
// key belongs to, -1 for none.
func contentAttrOf(key string) int {
	if i, ok := contentKeys[key]; ok {
		return i
	}
	for i, c := range contentAttrs {
		if c.prefix != "" && isIndexed(key, c.prefix) {
			_, field, _ := strings.Cut(key[len(c.prefix):], ".")
			if c.keep == "" || field != c.keep {
				return i
			}
		}
	}
	return -1
}

// contentKeys index contentAttrs by key.
var contentKeys = func() map[string]int {
	m := map[string]int{}
	for i, c := range contentAttrs {
		for _, k := range c.keys {
			m[k] = i
		}
	}
	return m
}()

// rowAttributes returns the attributes of s's spans row: without the
// content attributes its turns hold, and then with KeyContentInTurns.
func rowAttributes(s Span) []schema.Attr {
	var present []map[string]bool // of each content attribute, the keys s has
	for _, kv := range s.Attrs.List {
		i := contentAttrOf(kv.Key)
		if i < 0 {
			continue
		}
		if present == nil {
			present = make([]map[string]bool, len(contentAttrs))
		}
		if present[i] == nil {
			present[i] = map[string]bool{}
		}
		present[i][kv.Key] = true
	}
	if present == nil {
		return s.Attrs.List
	}
	said, ok := turnsSay(s)
	if !ok || !slices.ContainsFunc(said, saysSomething) {
		return s.Attrs.List // no turns, or none that says anything
	}
	changes := func(without map[string]bool) bool {
		t, ok := turnsSay(s.without(without))
		return ok && !slices.Equal(t, said)
	}
	held := map[string]bool{}
	for i, keys := range present {
		if keys == nil || !changes(keys) {
			continue
		}
		for k := range keys {
			// Of alternatives, each the turns say without the others.
			if contentAttrs[i].prefix != "" || len(keys) == 1 || !changes(except(keys, k)) {
				held[k] = true
			}
		}
	}
	if len(held) == 0 {
		return s.Attrs.List
	}
	out := make([]schema.Attr, 0, len(s.Attrs.List)+1)
	for _, kv := range s.Attrs.List {
		if !held[kv.Key] {
			out = append(out, kv)
		}
	}
	return append(out, schema.Attr{Key: schema.KeyContentInTurns, Value: schema.ContentInTurns})
}

// turnsSay is what the turns of s say, turn by turn (role NUL content);
// ok is false when mapping s panics, and then its row keeps everything.
func turnsSay(s Span) (said []string, ok bool) {
	defer func() {
		if recover() != nil {
			said, ok = nil, false
		}
	}()
	for _, t := range Turns(s) {
		said = append(said, t.Role+"\x00"+t.Content)
	}
	return said, true
}

func saysSomething(turn string) bool { return !strings.HasSuffix(turn, "\x00") }

// without returns s without the attributes keys names.
func (s Span) without(keys map[string]bool) Span {
	out := s
	out.Attrs.List = make([]schema.Attr, 0, len(s.Attrs.List))
	for _, kv := range s.Attrs.List {
		if !keys[kv.Key] {
			out.Attrs.List = append(out.Attrs.List, kv)
		}
	}
	return out
}

// except returns keys but k.
func except(keys map[string]bool, k string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for o := range keys {
		if o != k {
			out[o] = true
		}
	}
	return out
}
