package agentcheck

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
)

// Usage is the token usage the fake provider reports for one response.
type Usage struct {
	Input       int // Anthropic input_tokens; OpenAI input_tokens (includes cached)
	Output      int // output tokens
	CacheRead   int // Anthropic cache_read_input_tokens; OpenAI cached_tokens
	CacheCreate int // Anthropic cache_creation_input_tokens (ignored by OpenAI)
	Reasoning   int // OpenAI output_tokens_details.reasoning_tokens
}

// Script fixes what the fake provider answers. A request whose
// conversation does not yet hold a tool result gets the tool call; one
// that does gets the final text. Requests without the expected tool (side
// requests such as title generation) get SideText.
type Script struct {
	Command    string // shell command the tool call runs
	FinalText  string // final assistant answer
	SideText   string // answer to side requests
	ToolUsage  Usage
	FinalUsage Usage
	SideUsage  Usage
	// FailStatus, when set, answers every Messages and Responses request
	// with that HTTP status and FailMessage, in the API's error shape.
	FailStatus  int
	FailMessage string
}

// DefaultScript is the scenario used by the tests and fixtures.
var DefaultScript = Script{
	Command:    "echo hello",
	FinalText:  "done: hello",
	SideText:   "Shell hello",
	ToolUsage:  Usage{Input: 1200, Output: 40, CacheRead: 300, CacheCreate: 100, Reasoning: 8},
	FinalUsage: Usage{Input: 1500, Output: 25, CacheRead: 800, CacheCreate: 0, Reasoning: 4},
	SideUsage:  Usage{Input: 50, Output: 5},
}

// ProviderRequest is one request the fake provider received.
type ProviderRequest struct {
	Method string
	Path   string
	Query  string
	Model  string
	Stream bool
	// Kind is what the fake answered: "tool_call", "final", "side",
	// "count_tokens", "models", "failed" or "not_found".
	Kind string
	// Tools lists the tool names the request offered.
	Tools  []string
	Header http.Header
	Body   []byte
	Time   time.Time
}

// FakeProvider serves the Anthropic Messages API and the OpenAI Responses
// API on 127.0.0.1 with scripted answers.
type FakeProvider struct {
	Script Script
	srv    *httptest.Server

	// nonce makes ids unique across providers, so that a resumed
	// session never sees the same tool call id twice.
	nonce string

	mu   sync.Mutex
	reqs []ProviderRequest
	seq  int
}

// NewFakeProvider starts a fake provider on a loopback port.
func NewFakeProvider(s Script) *FakeProvider {
	var nb [4]byte
	_, _ = rand.Read(nb[:])
	p := &FakeProvider{Script: s, nonce: hex.EncodeToString(nb[:])}
	p.srv = testkit.LoopbackServer(http.HandlerFunc(p.serveHTTP))
	return p
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (p *FakeProvider) URL() string { return p.srv.URL }

// Close stops the server.
func (p *FakeProvider) Close() { p.srv.Close() }

// Requests returns a copy of every request received so far.
func (p *FakeProvider) Requests() []ProviderRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProviderRequest(nil), p.reqs...)
}

func (p *FakeProvider) record(r ProviderRequest) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	r.Time = time.Now()
	p.reqs = append(p.reqs, r)
	return p.seq
}

func (p *FakeProvider) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	req := ProviderRequest{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body,
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case p.Script.FailStatus != 0 && r.Method == http.MethodPost && (path == "/v1/messages" || path == "/v1/responses"):
		req.Kind = "failed"
		req.Model = jsonModel(body)
		p.record(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(p.Script.FailStatus)
		msg, _ := json.Marshal(p.Script.FailMessage)
		_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%s,"code":"invalid_request"}}`, msg)
	case r.Method == http.MethodPost && path == "/v1/messages":
		p.anthropicMessages(w, req)
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		req.Kind = "count_tokens"
		req.Model = jsonModel(body)
		p.record(req)
		writeJSON(w, map[string]any{"input_tokens": 42})
	case r.Method == http.MethodPost && path == "/v1/responses":
		p.openAIResponses(w, req)
	case r.Method == http.MethodGet && path == "/v1/models":
		req.Kind = "models"
		p.record(req)
		p.models(w, r)
	default:
		req.Kind = "not_found"
		p.record(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"fake provider: no route %s %s"}}`, r.Method, r.URL.Path)
	}
}

func (p *FakeProvider) models(w http.ResponseWriter, r *http.Request) {
	// Anthropic clients send anthropic-version; OpenAI clients do not.
	if r.Header.Get("anthropic-version") != "" {
		writeJSON(w, map[string]any{
			"data": []any{map[string]any{
				"type": "model", "id": "claude-sonnet-4-5-20250929",
				"display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z",
			}},
			"has_more": false, "first_id": "claude-sonnet-4-5-20250929", "last_id": "claude-sonnet-4-5-20250929",
		})
		return
	}
	writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
}

func jsonModel(body []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Model
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ---- Anthropic Messages API ----

func (p *FakeProvider) id(prefix string, seq int) string {
	return fmt.Sprintf("%s_fake%s_%04d", prefix, p.nonce, seq)
}
