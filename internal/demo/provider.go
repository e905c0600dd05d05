package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ChatPath is the path the provider serves.
const ChatPath = "/v1/chat/completions"

// maxRequestBytes bounds a request body.
const maxRequestBytes = 8 << 20

// Provider is a fake OpenAI-compatible chat completions API, in the real
// wire format, that answers the demo pipeline's agents deterministically
// from a script, with each model's provider's way of reporting usage
// (docs/design/demo.md). A Provider is safe for concurrent use.
type Provider struct {
	mu      sync.Mutex
	refused map[string]bool // conversation ids whose overload happened
}

// OverloadedSpeaker is the speaker whose first request in each conversation
// the provider refuses with 529.
const OverloadedSpeaker = "claude-verifier"

var _ http.Handler = (*Provider)(nil)

// NewProvider returns a provider.
func NewProvider() *Provider {
	return &Provider{refused: make(map[string]bool)}
}

// model is how the provider behind a model reports usage and cost.
type model struct {
	snapshot    string  // the model name responses carry; the requested name when empty
	usage       bool    // reports usage at all
	reasoning   bool    // spends reasoning tokens
	caching     bool    // reports cached prompt tokens
	inPerM      float64 // USD per million prompt tokens; reported as usage.cost when > 0
	outPerM     float64 // USD per million completion tokens
	cachedShare float64 // price of a cached prompt token relative to inPerM
}

var models = map[string]model{
	// First party: tokens, no cost.
	"claude-sonnet-4-5": {snapshot: "claude-sonnet-4-5-20250929", usage: true, caching: true},
	"gpt-5-codex":       {usage: true, reasoning: true, caching: true},
	// OpenRouter: tokens and cost.
	"anthropic/claude-opus-4.1": {usage: true, caching: true, inPerM: 15, outPerM: 75, cachedShare: 0.1},
	"openai/gpt-5":              {usage: true, reasoning: true, caching: true, inPerM: 1.25, outPerM: 10, cachedShare: 0.1},
	"google/gemini-2.5-pro":     {usage: true, reasoning: true, inPerM: 1.25, outPerM: 10},
	// A local server that reports no usage.
	"qwen2.5-coder:32b": {},
}

// unknownModel is how the provider answers a model it does not list.
var unknownModel = model{usage: true}

// ServeHTTP serves POST /v1/chat/completions.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != ChatPath {
		writeError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", fmt.Sprintf("Method %s not allowed; use POST", r.Method))
		return
	}
	var req ChatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes)).Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", fmt.Sprintf("Request body exceeds %d bytes", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if err := validate(req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	sc := sceneOf(req.Messages)
	if p.refuse(req.User, sc) {
		writeError(w, 529, "overloaded_error", "overloaded")
		return
	}
	msg := sc.reply(req)
	m, ok := models[req.Model]
	if !ok {
		m = unknownModel
	}
	resp := ChatResponse{
		ID:      "chatcmpl-" + digest(req.Model, req.User, req.Messages)[:24],
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []Choice{{Message: msg, FinishReason: "stop"}},
	}
	if m.snapshot != "" {
		resp.Model = m.snapshot
	}
	if len(msg.ToolCalls) > 0 {
		resp.Choices[0].FinishReason = "tool_calls"
	}
	if m.usage {
		resp.Usage = m.account(req, msg)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// validate rejects what the real API rejects among the fields the provider
// reads, including tool messages that answer no tool call and tool calls
// left unanswered.
func validate(req ChatRequest) error {
	if req.Model == "" {
		return errors.New("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return errors.New("'messages' must contain at least one message")
	}
	var pending []string // tool call ids of the last assistant message
	answered := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role == "tool" {
			if !slices.Contains(pending, m.ToolCallID) {
				return fmt.Errorf("messages[%d]: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			answered[m.ToolCallID] = true
			continue
		}
		if err := unanswered(pending, answered); err != nil {
			return err
		}
		pending = nil
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			for _, tc := range m.ToolCalls {
				pending = append(pending, tc.ID)
			}
		default:
			return fmt.Errorf("messages[%d].role: %q is not one of system, developer, user, assistant, tool", i, m.Role)
		}
	}
	return unanswered(pending, answered)
}

func unanswered(pending []string, answered map[string]bool) error {
	var missing []string
	for _, id := range pending {
		if !answered[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

// refuse reports whether to answer this request 529: the first request of
// OverloadedSpeaker in each conversation.
func (p *Provider) refuse(conversation string, sc scene) bool {
	if sc.speaker != OverloadedSpeaker {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused[conversation] {
		return false
	}
	p.refused[conversation] = true
	return true
}

// account returns the usage of a reply: about four characters a token, as
// real tokenizers average on English text.
func (m model) account(req ChatRequest, reply Message) *Usage {
	prompt := 3
	for _, msg := range req.Messages {
		prompt += 4 + tokens(msg.Content)
		for _, tc := range msg.ToolCalls {
			prompt += tokens(tc.Function.Name) + tokens(tc.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		prompt += tokens(string(b))
	}
	visible := tokens(reply.Content)
	for _, tc := range reply.ToolCalls {
		visible += tokens(tc.Function.Name) + tokens(tc.Function.Arguments)
	}
	u := &Usage{PromptTokens: prompt, PromptTokensDetails: &PromptTokensDetails{}, CompletionTokensDetails: &CompletionTokensDetails{}}
	if m.caching && len(req.Messages) > 2 {
		// A follow-up request repeats its system prompt, which the
		// provider has cached from the request before.
		u.PromptTokensDetails.CachedTokens = 4 + tokens(req.Messages[0].Content)
	}
	if m.reasoning {
		u.CompletionTokensDetails.ReasoningTokens = visible * 3 / 2
	}
	u.CompletionTokens = visible + u.CompletionTokensDetails.ReasoningTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if m.inPerM > 0 {
		cached := float64(u.PromptTokensDetails.CachedTokens)
		cost := (float64(u.PromptTokens)-cached)*m.inPerM/1e6 + cached*m.inPerM*m.cachedShare/1e6 + float64(u.CompletionTokens)*m.outPerM/1e6
		cost = math.Round(cost*1e10) / 1e10 // as billed, without float noise
		u.Cost = &cost
	}
	return u
}

func tokens(s string) int {
	if s == "" {
		return 0
	}
	return (utf8.RuneCountInString(s) + 3) / 4
}

// digest returns a hex digest of its arguments' JSON, for deterministic ids.
func digest(parts ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, p := range parts {
		_ = enc.Encode(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorDetail{Message: msg, Type: typ}})
}

// Server is a provider listening on a local port.
type Server struct {
	// URL is the base URL an OpenAI client takes, ending in /v1.
	URL string

	srv  *http.Server
	done chan struct{}
	once sync.Once
	err  error
}

// StartProvider serves a new Provider on 127.0.0.1 on a free port until
// Shutdown.
func StartProvider() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{
		URL:  "http://" + ln.Addr().String() + "/v1",
		srv:  &http.Server{Handler: NewProvider(), ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after Shutdown
	}()
	return s, nil
}

// Shutdown stops the server, waiting for requests in flight until ctx
// ends. It is safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		s.err = s.srv.Shutdown(ctx)
		if s.err != nil {
			s.err = errors.Join(s.err, s.srv.Close())
		}
		<-s.done
	})
	return s.err
}
