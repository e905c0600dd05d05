package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ChatRequest is the body of POST /v1/chat/completions, as OpenAI and the
// OpenAI-compatible APIs (OpenRouter, Anthropic's compatibility layer,
// local servers) take it. Only the fields the demo uses are declared.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// User identifies the end user or conversation to the provider.
	User string `json:"user,omitempty"`
}

// Message is one chat message. Content is plain text: on the wire an empty
// assistant content beside tool calls is null, and a request may also send
// content as an array of text parts.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// MarshalJSON writes m in the wire format, with null content for an
// assistant message that only calls tools.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Content: json.RawMessage("null"), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		c, err := json.Marshal(m.Content)
		if err != nil {
			return nil, err
		}
		w.Content = c
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a wire message whose content is a string, null, or an
// array of content parts (whose text parts are joined).
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	content, err := textContent(w.Content)
	if err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: content, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	return nil
}

func textContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errors.New("content must be a string, null or an array of content parts")
}

// Tool is a function the model may call.
type Tool struct {
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function declares a callable function and its JSON Schema parameters.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is a function call the model asks for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function to call and its arguments as a JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatResponse is the body of a successful chat completion.
type ChatResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // "chat.completion"
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Choice is one completion of a chat response.
type Choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"` // "stop" or "tool_calls"
}

// Usage is the token accounting of a chat response. Cost is OpenRouter's
// extension: the charge in USD, absent from providers that do not report it.
type Usage struct {
	PromptTokens            int                      `json:"prompt_tokens"`
	CompletionTokens        int                      `json:"completion_tokens"`
	TotalTokens             int                      `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
	Cost                    *float64                 `json:"cost,omitempty"`
}

// PromptTokensDetails breaks down the prompt tokens.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// CompletionTokensDetails breaks down the completion tokens, which include
// the reasoning tokens.
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// errorBody is the body of an OpenAI-style error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}
