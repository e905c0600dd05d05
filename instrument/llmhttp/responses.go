package llmhttp

import (
	"encoding/json"
	"net/http"

	"github.com/convtrace/convtrace/instrument"
)

// The OpenAI Responses API (POST /v1/responses), whole or streamed.

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
