package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client calls an OpenAI-compatible chat completions API.
type Client struct {
	// BaseURL is the API's base URL, ending in /v1 as OpenAI clients take
	// it, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// APIError is a provider's refusal: an HTTP status other than 200 and the
// message of its error body.
type APIError struct {
	StatusCode int
	Type       string // e.g. "overloaded_error", "invalid_request_error"
	Message    string
}

func (e *APIError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("provider returned %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("provider returned %d %s: %s", e.StatusCode, e.Type, e.Message)
}

// Retryable reports whether the same request may succeed later: a timeout,
// a rate limit or a server-side failure such as 529 overloaded.
func (e *APIError) Retryable() bool {
	switch e.StatusCode {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return e.StatusCode >= 500
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// Chat sends one chat completion request. A non-200 answer is an *APIError.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("encode chat request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return ChatResponse{}, fmt.Errorf("new chat request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("post chat completions: %w", err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		return ChatResponse{}, apiError(hresp)
	}
	var resp ChatResponse
	if err := json.NewDecoder(hresp.Body).Decode(&resp); err != nil {
		return ChatResponse{}, fmt.Errorf("decode chat response: %w", err)
	}
	if len(resp.Choices) == 0 {
		return resp, errors.New("chat response has no choices")
	}
	return resp, nil
}

// apiError reads an error answer: the message of an OpenAI-style error
// body, else the start of whatever the body is.
func apiError(resp *http.Response) *APIError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{StatusCode: resp.StatusCode}
	var body errorBody
	if json.Unmarshal(b, &body) == nil && body.Error.Message != "" {
		e.Type, e.Message = body.Error.Type, body.Error.Message
		return e
	}
	e.Message = strings.TrimSpace(string(b))
	if len(e.Message) > 200 {
		e.Message = strings.ToValidUTF8(e.Message[:200], "") + "…"
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}
