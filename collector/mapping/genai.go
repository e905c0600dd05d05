package mapping

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// OTel GenAI content, in each of the ways the conventions' versions record
// it: span attributes, the operation details event, one event per message,
// and the earliest gen_ai.content.* events (docs/design/mapping.md).

// Events of the earliest GenAI conventions, and their attributes.
const (
	eventContentPrompt     = "gen_ai.content.prompt"
	eventContentCompletion = "gen_ai.content.completion"
	keyPromptMessages      = "gen_ai.prompt"
	keyCompletionMessages  = "gen_ai.completion"
)

var _ = keys(schema.KeyInputMessages, schema.KeyOutputMessages, schema.KeySystemInstructions)

// GenAIMessages counts the input and output messages of a GenAI call's
// content; ok is false when it carries none: a joiner of its span and log
// records tells from them whether the call is complete.
func GenAIMessages(s Span) (in, out int, ok bool) {
	x, ok := genAIContent(s)
	return len(x.input), len(x.output), ok
}

// genAIContent reads a GenAI call that carries its content, as attributes
// or as events.
func genAIContent(s Span) (exchange, bool) {
	switch s.Attrs.Str(schema.KeyOperationName) {
	case schema.OperationExecuteTool, schema.OperationCreateAgent, schema.OperationInvokeAgent:
		return exchange{}, false
	}
	if x, ok := genAIMessages(s.Attrs, nil); ok {
		return x, true
	}
	var (
		x       exchange
		found   bool
		choices []choice
	)
	for _, e := range s.Events {
		switch e.Name {
		case schema.EventInferenceDetails:
			body, _ := eventBody(e)
			d, _ := genAIMessages(e.Attrs, body)
			x.input = append(x.input, d.input...)
			x.output = append(x.output, d.output...)
		case schema.EventSystemMessage, schema.EventUserMessage, schema.EventAssistantMessage, schema.EventToolMessage:
			role := strings.TrimSuffix(strings.TrimPrefix(e.Name, "gen_ai."), ".message")
			body, _ := eventBody(e)
			x.input = append(x.input, genai.FromJSON(body, role))
		case schema.EventChoice:
			choices = append(choices, choiceOf(e))
		case eventContentPrompt:
			x.input = append(x.input, inputMessages(e.Attrs.Str(keyPromptMessages))...)
		case eventContentCompletion:
			x.output = append(x.output, outputMessages(e.Attrs.Str(keyCompletionMessages))...)
		default:
			continue
		}
		found = true
	}
	x.output = append(x.output, joinChoices(choices)...)
	return x, found
}

// joinChoices returns the output messages of gen_ai.choice events, by
// index: several events of one index are an answer streamed in pieces,
// one message.
func joinChoices(choices []choice) []genai.Message {
	sort.SliceStable(choices, func(i, j int) bool { return choices[i].index < choices[j].index })
	var out []genai.Message
	for i := 0; i < len(choices); {
		j := i + 1
		for j < len(choices) && choices[j].index == choices[i].index {
			j++
		}
		pieces := make([]genai.Message, 0, j-i)
		for _, c := range choices[i:j] {
			pieces = append(pieces, c.message)
		}
		if len(pieces) == 1 {
			out = append(out, pieces[0])
		} else {
			out = append(out, genai.Join(pieces))
		}
		i = j
	}
	return out
}

// hasGenAIContent reports, without reading it, whether s carries content
// genAIContent reads.
func hasGenAIContent(s Span) bool {
	if _, ok := s.Attrs.Get(schema.KeyInputMessages, schema.KeyOutputMessages, schema.KeySystemInstructions); ok {
		return true
	}
	for _, e := range s.Events {
		if genAIContentEvents[e.Name] {
			return true
		}
	}
	return false
}

var genAIContentEvents = map[string]bool{
	schema.EventInferenceDetails: true, schema.EventSystemMessage: true, schema.EventUserMessage: true,
	schema.EventAssistantMessage: true, schema.EventToolMessage: true, schema.EventChoice: true,
	eventContentPrompt: true, eventContentCompletion: true,
}

// genAICall recognises a GenAI call whose content is not on its span: it
// was not captured, or it comes as log records. Its turns carry what the
// span knows (model, usage, failure).
func genAICall(s Span) (exchange, bool) {
	return exchange{}, isGenAICall(s.Attrs)
}

// isGenAICall reports whether attributes describe a GenAI provider call
// (chat, text_completion, generate_content, embeddings…) rather than a
// tool execution or an agent.
func isGenAICall(a Attrs) bool {
	op := a.Str(schema.KeyOperationName)
	switch op {
	case schema.OperationExecuteTool, schema.OperationCreateAgent, schema.OperationInvokeAgent:
		return false
	}
	_, provider := a.Get(schema.KeyProviderName, schema.KeySystem)
	_, model := a.Get(schema.KeyRequestModel, schema.KeyResponseModel)
	if op != "" {
		return provider || model
	}
	return provider && model // the earliest conventions had no operation name
}

// genAIMessages reads the three content attributes from a, else from an
// event body; ok when any is present.
func genAIMessages(a Attrs, body map[string]json.RawMessage) (exchange, bool) {
	get := func(key string) (string, bool) {
		if v, ok := a.Get(key); ok {
			return v, true
		}
		if raw, ok := body[key]; ok {
			return genai.String(raw), true
		}
		return "", false
	}
	in, hasIn := get(schema.KeyInputMessages)
	out, hasOut := get(schema.KeyOutputMessages)
	sys, hasSys := get(schema.KeySystemInstructions)
	if !hasIn && !hasOut && !hasSys {
		return exchange{}, false
	}
	var x exchange
	input := inputMessages(in)
	if parts := systemParts(sys); len(parts) > 0 && !repeatsSystem(input, parts) {
		x.input = append(x.input, genai.Message{Role: "system", Parts: parts})
	}
	x.input = append(x.input, input...)
	x.output = outputMessages(out)
	return x, true
}

// repeatsSystem reports whether the input messages open with the system
// instructions given apart (some instrumentations send both): they are
// stored once.
func repeatsSystem(input []genai.Message, system []genai.Part) bool {
	if !hasSystem(input) {
		return false
	}
	given := genai.Message{Role: "system", Parts: system}
	return strings.TrimSpace(input[0].Text()) == strings.TrimSpace(given.Text())
}

// systemParts reads gen_ai.system_instructions: a JSON array of parts, or
// plain text.
func systemParts(s string) []genai.Part {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return genai.PartsFromJSON(json.RawMessage(s))
	}
	return []genai.Part{genai.Text(s)}
}

// inputMessages reads a messages attribute; text that is not a JSON array
// of messages is one user message.
func inputMessages(s string) []genai.Message { return messagesOrText(s, "user") }

// outputMessages reads a messages attribute; text that is not a JSON array
// of messages is one assistant message.
func outputMessages(s string) []genai.Message { return messagesOrText(s, "assistant") }

func messagesOrText(s, role string) []genai.Message {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if ms, ok := genai.Parse(s); ok {
		return ms
	}
	return []genai.Message{{Role: role, Parts: []genai.Part{genai.Text(s)}}}
}

// choice is a gen_ai.choice event: one output message and its index.
type choice struct {
	index   int
	message genai.Message
}

// choiceOf reads a gen_ai.choice body: {"index", "finish_reason",
// "message": {"role", "content", "tool_calls"}}, or a streamed piece of
// one, its message under "delta" as Chat Completions chunks have it.
func choiceOf(e Event) choice {
	body, _ := eventBody(e)
	var msg map[string]json.RawMessage
	if json.Unmarshal(body["message"], &msg) != nil || msg == nil {
		_ = json.Unmarshal(body["delta"], &msg)
	}
	if msg == nil {
		msg = map[string]json.RawMessage{}
	}
	if _, ok := msg["tool_calls"]; !ok && body["tool_calls"] != nil {
		msg["tool_calls"] = body["tool_calls"]
	}
	if _, ok := msg["content"]; !ok && body["content"] != nil {
		msg["content"] = body["content"]
	}
	c := choice{message: genai.FromJSON(msg, "assistant")}
	c.message.FinishReason = genai.String(body["finish_reason"])
	_ = json.Unmarshal(body["index"], &c.index)
	return c
}

// eventBody returns the body of a GenAI event as an object: the
// gen_ai.event.content attribute (the body of a log record, or of a span
// event that records it so), else the body's fields recorded as attributes.
// A body that is not an object is the message content.
func eventBody(e Event) (map[string]json.RawMessage, bool) {
	if v, ok := e.Attrs.Get(schema.KeyEventContent); ok {
		var body map[string]json.RawMessage
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &body) == nil {
			return body, true
		}
		return map[string]json.RawMessage{"content": genai.Marshal(v)}, true
	}
	body := map[string]json.RawMessage{}
	for _, kv := range e.Attrs.List {
		switch kv.Key {
		case "content", "role", "id", "finish_reason":
			body[kv.Key] = genai.Marshal(kv.Value)
		case "index", "tool_calls", "message":
			if t := bytes.TrimSpace([]byte(kv.Value)); json.Valid(t) {
				body[kv.Key] = t
			}
		}
	}
	return body, len(body) > 0
}
