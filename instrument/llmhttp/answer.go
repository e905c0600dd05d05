package llmhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
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

// content is the response turn's content: the text when the answer is
// plain text, else one assistant message with the text and tool calls in
// the OTel GenAI messages shape.
func (a *answer) content() string {
	if len(a.calls) == 0 {
		return a.text.String()
	}
	m := message{Role: "assistant", FinishReason: a.finish}
	if a.text.Len() > 0 {
		m.Parts = append(m.Parts, textPart(a.text.String()))
	}
	for _, c := range a.calls {
		m.Parts = append(m.Parts, toolCallPart(c.id, c.name, c.args.String()))
	}
	return string(marshal([]message{m}))
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
	if s := jsonString(r.Error); s != "" {
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

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u chatUsage) usage() instrument.Usage {
	return instrument.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
	}
}

type chatToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatMessage struct {
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls"`
}

type chatBody struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		Delta        chatMessage `json:"delta"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatCompletion reads a Chat Completions response body. Only the first
// choice is recorded.
func (a *answer) chatCompletion(body []byte) {
	var b chatBody
	if json.Unmarshal(body, &b) != nil {
		return
	}
	a.model = b.Model
	if b.Usage != nil {
		a.setUsage(b.Usage.usage())
	}
	if len(b.Choices) == 0 {
		return
	}
	c := b.Choices[0]
	a.finish = c.FinishReason
	if c.Message.Content != nil {
		a.text.WriteString(*c.Message.Content)
	} else if c.Message.Refusal != nil {
		a.text.WriteString(*c.Message.Refusal)
	}
	for _, tc := range c.Message.ToolCalls {
		a.addCall(tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
}

// chatChunk reads one streamed Chat Completions chunk.
func (a *answer) chatChunk(data []byte) {
	var b chatBody
	if json.Unmarshal(data, &b) != nil {
		return
	}
	if b.Model != "" {
		a.model = b.Model
	}
	if b.Usage != nil {
		a.setUsage(b.Usage.usage())
	}
	if len(b.Error) > 0 && string(b.Error) != "null" {
		a.err = providerError(http.StatusOK, data)
	}
	for _, c := range b.Choices {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
		if c.Delta.Content != nil {
			a.text.WriteString(*c.Delta.Content)
		}
		for _, tc := range c.Delta.ToolCalls {
			key := tc.ID
			if tc.Index != nil {
				key = fmt.Sprint(*tc.Index)
			}
			call := a.call(key)
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			call.args.WriteString(tc.Function.Arguments)
		}
	}
}

// --- Anthropic Messages ---

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// usage counts cache reads and writes in the input tokens, as OpenAI's
// prompt_tokens and the GenAI conventions do; Anthropic's input_tokens
// leaves them out.
func (u anthropicUsage) usage() instrument.Usage {
	return instrument.Usage{
		InputTokens:      int(schema.InputTokens(uint64(u.InputTokens), uint64(u.CacheReadInputTokens), uint64(u.CacheCreationInputTokens), true)),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthropicMessage struct {
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      *anthropicUsage  `json:"usage"`
}

func (a *answer) anthropicMessage(body []byte) {
	var m anthropicMessage
	if json.Unmarshal(body, &m) != nil {
		return
	}
	a.model, a.finish = m.Model, m.StopReason
	if m.Usage != nil {
		a.setUsage(m.Usage.usage())
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			a.text.WriteString(b.Text)
		case "tool_use", "server_tool_use":
			a.addCall(b.ID, b.Name, string(b.Input))
		}
	}
}

// anthropicEvent reads one event of a Messages stream. The usage of
// message_start holds the input side; message_delta's holds the output
// tokens and, on some servers, updated input counts.
func (a *answer) anthropicEvent(data []byte) {
	var e struct {
		Type         string           `json:"type"`
		Index        int              `json:"index"`
		Message      anthropicMessage `json:"message"`
		ContentBlock anthropicBlock   `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
		Usage *anthropicUsage `json:"usage"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	key := fmt.Sprint(e.Index)
	switch e.Type {
	case "message_start":
		a.model = e.Message.Model
		if e.Message.Usage != nil {
			a.setUsage(e.Message.Usage.usage())
		}
	case "content_block_start":
		switch e.ContentBlock.Type {
		case "text":
			a.text.WriteString(e.ContentBlock.Text)
		case "tool_use", "server_tool_use":
			c := a.call(key)
			c.id, c.name = e.ContentBlock.ID, e.ContentBlock.Name
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			a.text.WriteString(e.Delta.Text)
		case "input_json_delta":
			if c, ok := a.byKey[key]; ok {
				c.args.WriteString(e.Delta.PartialJSON)
			}
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			a.finish = e.Delta.StopReason
		}
		if e.Usage != nil {
			u := instrument.Usage{}
			if a.usage != nil {
				u = *a.usage
			}
			d := e.Usage.usage()
			u.OutputTokens = d.OutputTokens
			if d.InputTokens > 0 {
				u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens = d.InputTokens, d.CacheReadTokens, d.CacheWriteTokens
			}
			a.setUsage(u)
		}
	case "error":
		a.err = providerError(http.StatusOK, data)
	}
}

// --- OpenAI Responses ---

type responsesBody struct {
	Model  string `json:"model"`
	Status string `json:"status"`
	Output []struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	} `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// responses reads a Responses API response object, the body of a
// non-streamed call or the response of a response.completed event.
func (a *answer) responses(body []byte) {
	var b responsesBody
	if json.Unmarshal(body, &b) != nil {
		return
	}
	a.model, a.finish = b.Model, b.Status
	if b.IncompleteDetails != nil && b.IncompleteDetails.Reason != "" {
		a.finish = b.IncompleteDetails.Reason
	}
	if u := b.Usage; u != nil {
		a.setUsage(instrument.Usage{
			InputTokens:     u.InputTokens,
			OutputTokens:    u.OutputTokens,
			CacheReadTokens: u.InputTokensDetails.CachedTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
		})
	}
	if b.Error != nil && b.Error.Message != "" {
		a.err = &HTTPError{StatusCode: http.StatusOK, Type: b.Error.Code, Message: b.Error.Message}
	}
	a.text.Reset()
	a.calls, a.byKey = nil, nil
	for _, o := range b.Output {
		switch o.Type {
		case "message":
			for _, c := range o.Content {
				a.text.WriteString(c.Text + c.Refusal)
			}
		case "function_call":
			a.addCall(o.CallID, o.Name, o.Arguments)
		}
	}
}

// responsesEvent reads one event of a Responses stream: text deltas as
// they come, then the whole response from the final event.
func (a *answer) responsesEvent(data []byte) {
	var e struct {
		Type     string          `json:"type"`
		Delta    string          `json:"delta"`
		Response json.RawMessage `json:"response"`
		Message  string          `json:"message"`
		Code     string          `json:"code"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	switch e.Type {
	case "response.output_text.delta":
		a.text.WriteString(e.Delta)
	case "response.created":
		var b responsesBody
		if json.Unmarshal(e.Response, &b) == nil && b.Model != "" {
			a.model = b.Model
		}
	case "response.completed", "response.incomplete", "response.failed":
		a.responses(e.Response)
	case "error":
		a.err = &HTTPError{StatusCode: http.StatusOK, Type: e.Code, Message: e.Message}
	}
}
