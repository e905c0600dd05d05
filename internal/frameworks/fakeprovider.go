package frameworks

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The scenario every source runs.
const (
	ToolName      = "lookup_weather"
	ToolArguments = `{"city":"Paris"}`
	ToolResult    = "sunny, 21C"
	ToolCallID    = "call_weather_1"

	PlannerName   = "planner"
	PlannerSystem = "You plan."
	PlannerUser   = "Plan a day in Paris."
	PlanAnswer    = "Plan: go outside."

	CriticName   = "critic"
	CriticSystem = "You critique."
	CriticUser   = "Critique the plan."
	CriticAnswer = "Looks fine."

	OpenAIModel    = "gpt-4o-mini"
	AnthropicModel = "claude-3-5-haiku-20241022"
)

// Usage is the token usage the fake provider reports for one answer.
type Usage struct{ In, Out int }

// The usage of each answer: distinct, so a test can tell the calls apart by
// their tokens.
var (
	ToolCallUsage = Usage{In: 100, Out: 10}
	PlanUsage     = Usage{In: 150, Out: 20}
	CriticUsage   = Usage{In: 80, Out: 5}
)

// Answer kinds.
const (
	AnswerToolCall = "tool_call"
	AnswerPlan     = "plan"
	AnswerCritic   = "critic"
)

// Recorded is one request the fake provider answered.
type Recorded struct {
	Path   string
	Stream bool
	Answer string
	Body   json.RawMessage
}

// Provider is a fake OpenAI (Chat Completions and Responses) and Anthropic
// (Messages) endpoint on loopback.
type Provider struct {
	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	requests []Recorded
}

// StartProvider starts a fake provider on a free loopback port.
func StartProvider() (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Provider{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", p.chatCompletions)
	mux.HandleFunc("POST /v1/responses", p.responses)
	mux.HandleFunc("POST /v1/messages", p.messages)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"fake provider: no route %s %s","type":"invalid_request_error"}}`, r.Method, r.URL.Path), http.StatusNotFound)
	})
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the provider's base URL, without /v1.
func (p *Provider) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the provider.
func (p *Provider) Close() error { return p.srv.Close() }

// Requests returns the requests answered so far.
func (p *Provider) Requests() []Recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Recorded(nil), p.requests...)
}

func (p *Provider) record(r *http.Request, body []byte, stream bool, answer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, Recorded{Path: r.URL.Path, Stream: stream, Answer: answer, Body: json.RawMessage(body)})
}

// conversation is what the answer is chosen from: the system prompts, the
// user texts, whether tools were offered and whether a tool result came back.
type conversation struct {
	system     []string
	user       []string
	hasTools   bool
	toolResult bool
}

// answer picks the answer: the critic's when a system prompt (or user text)
// is the critic's; the plan once a tool result is there; a tool call when
// tools are offered; else the plan.
func (c conversation) answer() (string, Usage) {
	for _, s := range c.system {
		if strings.Contains(s, CriticSystem) {
			return AnswerCritic, CriticUsage
		}
	}
	for _, u := range c.user {
		if strings.Contains(u, CriticUser) {
			return AnswerCritic, CriticUsage
		}
	}
	if c.toolResult {
		return AnswerPlan, PlanUsage
	}
	if c.hasTools {
		return AnswerToolCall, ToolCallUsage
	}
	return AnswerPlan, PlanUsage
}

func answerText(kind string) string {
	if kind == AnswerCritic {
		return CriticAnswer
	}
	return PlanAnswer
}

// textOf flattens message content: a string, or a list of parts with text.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, part := range parts {
			b.WriteString(part.Text)
		}
		return b.String()
	}
	return ""
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		http.Error(w, `{"error":{"message":"fake provider: bad JSON: `+strings.ReplaceAll(err.Error(), `"`, `'`)+`"}}`, http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func modelOr(m, def string) string {
	if m == "" {
		return def
	}
	return m
}

// ---- OpenAI Chat Completions ----

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (p *Provider) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, ok := readJSON(w, r, &req)
	if !ok {
		return
	}
	c := conversation{hasTools: len(req.Tools) > 0}
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			c.system = append(c.system, textOf(m.Content))
		case "user":
			c.user = append(c.user, textOf(m.Content))
		case "tool", "function":
			c.toolResult = true
		}
	}
	kind, usage := c.answer()
	p.record(r, body, req.Stream, kind)
	model := modelOr(req.Model, OpenAIModel)
	id := "chatcmpl-fake-" + kind
	created := time.Now().Unix()
	usageJSON := map[string]any{
		"prompt_tokens": usage.In, "completion_tokens": usage.Out, "total_tokens": usage.In + usage.Out,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
	}
	toolCall := map[string]any{
		"id": ToolCallID, "type": "function",
		"function": map[string]any{"name": ToolName, "arguments": ToolArguments},
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		finish := "stop"
		if kind == AnswerToolCall {
			msg["tool_calls"] = []any{toolCall}
			finish = "tool_calls"
		} else {
			msg["content"] = answerText(kind)
		}
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"system_fingerprint": "fp_fake",
			"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":              usageJSON,
		})
		return
	}
	s := testkit.NewSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"system_fingerprint": "fp_fake",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
	}
	if kind == AnswerToolCall {
		s.Event("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": ToolCallID, "type": "function",
			"function": map[string]any{"name": ToolName, "arguments": ""},
		}}}, nil))
		half := len(ToolArguments) / 2
		for _, part := range []string{ToolArguments[:half], ToolArguments[half:]} {
			s.Event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "function": map[string]any{"arguments": part},
			}}}, nil))
		}
		s.Event("", chunk(map[string]any{}, "tool_calls"))
	} else {
		s.Event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, word := range splitWords(answerText(kind)) {
			s.Event("", chunk(map[string]any{"content": word}, nil))
		}
		s.Event("", chunk(map[string]any{}, "stop"))
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		s.Event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"system_fingerprint": "fp_fake", "choices": []any{}, "usage": usageJSON,
		})
	}
	s.Data("[DONE]")
}

// splitWords splits text into words that keep their following space, so the
// pieces join back to text.
func splitWords(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// ---- OpenAI Responses ----
