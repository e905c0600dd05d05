package llmhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema/genai"
)

// answer is a provider's answer assembled from a response body or from the
// events of a stream.
type answer struct {
	model  string
	text   strings.Builder
	calls  []*toolCall
	byKey  map[string]*toolCall // stream deltas name a call by index
	finish string
	usage  *instrument.Usage
	err    error // an error the provider reported in a 2xx body or stream
}

type toolCall struct {
	id, name string
	args     strings.Builder
}

// call returns the tool call known by key (a stream index), adding it when
// it is new.
func (a *answer) call(key string) *toolCall {
	if c, ok := a.byKey[key]; ok {
		return c
	}
	if a.byKey == nil {
		a.byKey = map[string]*toolCall{}
	}
	c := &toolCall{}
	a.byKey[key] = c
	a.calls = append(a.calls, c)
	return c
}

func (a *answer) addCall(id, name, args string) {
	c := &toolCall{id: id, name: name}
	c.args.WriteString(args)
	a.calls = append(a.calls, c)
}

func (a *answer) setUsage(u instrument.Usage) { a.usage = &u }

// begun says whether the answer holds content yet, text or a tool call: a
// stream's first such event is its first token.
func (a *answer) begun() bool { return a.text.Len() > 0 || len(a.calls) > 0 }

// content is the response turn's content: the text when the answer is
// plain text, else one assistant message with the text and tool calls in
// the OTel GenAI messages shape.
func (a *answer) content() string {
	if len(a.calls) == 0 {
		return a.text.String()
	}
	m := genai.Message{Role: "assistant", FinishReason: a.finish}
	if a.text.Len() > 0 {
		m.Parts = append(m.Parts, genai.Text(a.text.String()))
	}
	for _, c := range a.calls {
		m.Parts = append(m.Parts, genai.ToolCall(c.id, c.name, c.args.String()))
	}
	return genai.Render([]genai.Message{m})
}

func (a *answer) response() instrument.Response {
	return instrument.Response{Content: a.content(), Model: a.model, Usage: a.usage}
}

// HTTPError is the error recorded for a call the provider answered with an
// HTTP status of 400 or above, or with an error event in a stream.
type HTTPError struct {
	StatusCode int    // the HTTP status
	Type       string // the provider's error type or code, when it says
	Message    string // the provider's error message, else the body
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// providerError reads the error a provider sent: OpenAI's {"error":
// {"message","type","code"}}, Anthropic's {"type":"error","error":
// {"type","message"}}, or a bare {"message"} or {"error": "..."}.
func providerError(status int, body []byte) *HTTPError {
	e := &HTTPError{StatusCode: status}
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &r) != nil {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 1000 {
			e.Message = e.Message[:1000]
		}
		return e
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if s := genai.StringValue(r.Error); s != "" {
		e.Message = s
	} else if json.Unmarshal(r.Error, &inner) == nil && inner.Message != "" {
		e.Message, e.Type = inner.Message, inner.Type
		if e.Type == "" {
			e.Type = strings.Trim(string(inner.Code), `"`)
		}
	} else {
		e.Message = r.Message
	}
	return e
}

// --- OpenAI Chat Completions ---
