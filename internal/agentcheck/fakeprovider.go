package agentcheck

import (
	"bytes"
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
	// "count_tokens", "models" or "not_found".
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

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (p *FakeProvider) anthropicMessages(w http.ResponseWriter, req ProviderRequest) {
	var ar anthropicRequest
	if err := json.Unmarshal(req.Body, &ar); err != nil {
		req.Kind = "bad_request"
		p.record(req)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Stream = ar.Model, ar.Stream
	hasBash := false
	for _, t := range ar.Tools {
		req.Tools = append(req.Tools, t.Name)
		if t.Name == "Bash" {
			hasBash = true
		}
	}
	lastHasToolResult := false
	if n := len(ar.Messages); n > 0 {
		lastHasToolResult = bytes.Contains(ar.Messages[n-1].Content, []byte(`"tool_result"`))
	}
	switch {
	case hasBash && lastHasToolResult:
		req.Kind = "final"
	case hasBash:
		req.Kind = "tool_call"
	default:
		req.Kind = "side"
	}
	seq := p.record(req)
	msgID := p.id("msg", seq)
	var usage Usage
	var block map[string]any
	var stop string
	switch req.Kind {
	case "tool_call":
		usage, stop = p.Script.ToolUsage, "tool_use"
		block = map[string]any{
			"type": "tool_use", "id": p.id("toolu", seq), "name": "Bash",
			"input": map[string]any{"command": p.Script.Command, "description": "Print hello"},
		}
	case "final":
		usage, stop = p.Script.FinalUsage, "end_turn"
		block = map[string]any{"type": "text", "text": p.Script.FinalText}
	default:
		usage, stop = p.Script.SideUsage, "end_turn"
		block = map[string]any{"type": "text", "text": p.Script.SideText}
	}
	model := ar.Model
	if model == "" {
		model = "claude-sonnet-4-5-20250929"
	}
	w.Header().Set("request-id", p.id("req", seq))
	if !ar.Stream {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(usage, usage.Output),
		})
		return
	}
	sse := testkit.NewSSE(w)
	sse.Event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": anthropicUsage(usage, 1),
		},
	})
	switch block["type"] {
	case "tool_use":
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		sse.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		args, _ := json.Marshal(block["input"])
		half := len(args) / 2
		for _, part := range []string{string(args[:half]), string(args[half:])} {
			sse.Event("content_block_delta", map[string]any{
				"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part},
			})
		}
	default:
		text := block["text"].(string)
		sse.Event("content_block_start", map[string]any{
			"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""},
		})
		half := len(text) / 2
		for _, part := range []string{text[:half], text[half:]} {
			sse.Event("content_block_delta", map[string]any{
				"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part},
			})
		}
	}
	sse.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse.Event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.Output},
	})
	sse.Event("message_stop", map[string]any{"type": "message_stop"})
}

func anthropicUsage(u Usage, output int) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input,
		"output_tokens":               output,
		"cache_read_input_tokens":     u.CacheRead,
		"cache_creation_input_tokens": u.CacheCreate,
		"service_tier":                "standard",
	}
}

// ---- OpenAI Responses API ----

type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// shellArguments builds the function call arguments for whichever shell
// tool the request offers.
func shellArguments(tool, command string) string {
	var v any
	switch tool {
	case "shell":
		v = map[string]any{"command": []string{"bash", "-lc", command}}
	case "exec_command":
		v = map[string]any{"cmd": command}
	default: // shell_command and unknown
		v = map[string]any{"command": command}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p *FakeProvider) openAIResponses(w http.ResponseWriter, req ProviderRequest) {
	var rr responsesRequest
	if err := json.Unmarshal(req.Body, &rr); err != nil {
		req.Kind = "bad_request"
		p.record(req)
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Stream = rr.Model, rr.Stream
	shellTool := ""
	for _, t := range rr.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		req.Tools = append(req.Tools, name)
		switch name {
		case "shell", "shell_command", "exec_command":
			if shellTool == "" || name == "shell_command" {
				shellTool = name
			}
		}
	}
	hasOutput := false
	for _, it := range rr.Input {
		if bytes.Contains(it, []byte(`"function_call_output"`)) || bytes.Contains(it, []byte(`"custom_tool_call_output"`)) {
			hasOutput = true
		}
	}
	switch {
	case shellTool != "" && hasOutput:
		req.Kind = "final"
	case shellTool != "":
		req.Kind = "tool_call"
	default:
		req.Kind = "side"
	}
	seq := p.record(req)
	respID := p.id("resp", seq)
	model := rr.Model
	var usage Usage
	var item map[string]any
	switch req.Kind {
	case "tool_call":
		usage = p.Script.ToolUsage
		item = map[string]any{
			"type": "function_call", "id": p.id("fc", seq),
			"call_id": p.id("call", seq), "name": shellTool,
			"arguments": shellArguments(shellTool, p.Script.Command), "status": "completed",
		}
	case "final":
		usage = p.Script.FinalUsage
		item = openAIMessage(p.id("msg", seq), p.Script.FinalText)
	default:
		usage = p.Script.SideUsage
		item = openAIMessage(p.id("msg", seq), p.Script.SideText)
	}
	base := map[string]any{
		"id": respID, "object": "response", "created_at": time.Now().Unix(),
		"model": model, "status": "in_progress", "output": []any{},
	}
	done := map[string]any{}
	for k, v := range base {
		done[k] = v
	}
	done["status"] = "completed"
	done["output"] = []any{item}
	done["usage"] = map[string]any{
		"input_tokens":          usage.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": usage.CacheRead},
		"output_tokens":         usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": usage.Reasoning},
		"total_tokens":          usage.Input + usage.Output,
	}
	if !rr.Stream {
		writeJSON(w, done)
		return
	}
	w.Header().Set("x-request-id", p.id("req", seq))
	sse := testkit.NewSSE(w)
	sse.Event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": base})
	sse.Event("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": base})
	n := 2
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	if item["type"] == "message" {
		added["content"] = []any{}
		added["status"] = "in_progress"
	} else {
		added["arguments"] = ""
		added["status"] = "in_progress"
	}
	sse.Event("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": n, "output_index": 0, "item": added})
	n++
	if item["type"] == "message" {
		text := item["content"].([]any)[0].(map[string]any)["text"].(string)
		sse.Event("response.content_part.added", map[string]any{
			"type": "response.content_part.added", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}},
		})
		n++
		half := len(text) / 2
		for _, part := range []string{text[:half], text[half:]} {
			sse.Event("response.output_text.delta", map[string]any{
				"type": "response.output_text.delta", "sequence_number": n, "item_id": item["id"],
				"output_index": 0, "content_index": 0, "delta": part,
			})
			n++
		}
		sse.Event("response.output_text.done", map[string]any{
			"type": "response.output_text.done", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0, "text": text,
		})
		n++
		sse.Event("response.content_part.done", map[string]any{
			"type": "response.content_part.done", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}},
		})
		n++
	} else {
		sse.Event("response.function_call_arguments.delta", map[string]any{
			"type": "response.function_call_arguments.delta", "sequence_number": n,
			"item_id": item["id"], "output_index": 0, "delta": item["arguments"],
		})
		n++
		sse.Event("response.function_call_arguments.done", map[string]any{
			"type": "response.function_call_arguments.done", "sequence_number": n,
			"item_id": item["id"], "output_index": 0, "arguments": item["arguments"],
		})
		n++
	}
	sse.Event("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": n, "output_index": 0, "item": item})
	n++
	sse.Event("response.completed", map[string]any{"type": "response.completed", "sequence_number": n, "response": done})
}

func openAIMessage(id, text string) map[string]any {
	return map[string]any{
		"type": "message", "id": id, "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
	}
}

// id returns a response-unique id such as toolu_fake1a2b3c4d_0001.
func (p *FakeProvider) id(prefix string, seq int) string {
	return fmt.Sprintf("%s_fake%s_%04d", prefix, p.nonce, seq)
}
