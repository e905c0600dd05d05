package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/demo"
)

func newClient(t *testing.T, h http.Handler) *demo.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &demo.Client{BaseURL: srv.URL + "/v1", HTTP: srv.Client()}
}

func system(speaker, phase string) demo.Message {
	return demo.Message{Role: "system", Content: "You are " + speaker + ", a test agent.\nPhase: " + phase + "."}
}

var tools = []demo.Tool{
	{Type: "function", Function: demo.Function{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}},
	{Type: "function", Function: demo.Function{Name: "run_tests", Parameters: json.RawMessage(`{"type":"object"}`)}},
	{Type: "function", Function: demo.Function{Name: "apply_patch", Parameters: json.RawMessage(`{"type":"object"}`)}},
}

func TestProviderToolCallFlow(t *testing.T) {
	c := newClient(t, demo.NewProvider())
	ctx := context.Background()
	req := demo.ChatRequest{
		Model:    "gpt-5-codex",
		Messages: []demo.Message{system("codex-executor", "execute"), {Role: "user", Content: "Fix parseConfig."}},
		Tools:    tools,
		User:     "thread-1",
	}
	var names []string
	for turn := 0; ; turn++ {
		if turn == 5 {
			t.Fatalf("no final answer after %d turns; asked for %q", turn, names)
		}
		resp, err := c.Chat(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Usage == nil {
			t.Fatalf("response %+v, want a chat.completion with an id and usage", resp)
		}
		if len(choice.Message.ToolCalls) == 0 {
			if choice.FinishReason != "stop" || !strings.Contains(choice.Message.Content, "5 passed") {
				t.Errorf("final answer %q finish %q, want the executor's report and stop", choice.Message.Content, choice.FinishReason)
			}
			break
		}
		if choice.FinishReason != "tool_calls" || choice.Message.Content != "" {
			t.Errorf("tool call reply has finish %q and content %q, want tool_calls and none", choice.FinishReason, choice.Message.Content)
		}
		req.Messages = append(req.Messages, choice.Message)
		for _, tc := range choice.Message.ToolCalls {
			if tc.Type != "function" || !strings.HasPrefix(tc.ID, "call_") || !json.Valid([]byte(tc.Function.Arguments)) {
				t.Errorf("tool call %+v, want a function call with an id and JSON arguments", tc)
			}
			names = append(names, tc.Function.Name)
			req.Messages = append(req.Messages, demo.Message{Role: "tool", ToolCallID: tc.ID, Content: "ok"})
		}
	}
	if want := "read_file run_tests apply_patch run_tests"; strings.Join(names, " ") != want {
		t.Errorf("tool calls %q, want %q", names, want)
	}

	// Without tools on offer, the executor answers straight away.
	req.Messages, req.Tools = req.Messages[:2], nil
	resp, err := c.Chat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices[0].Message.ToolCalls) != 0 {
		t.Errorf("asked for tools %+v that were not offered", resp.Choices[0].Message.ToolCalls)
	}
}

// TestProviderWireFormat checks the raw JSON, not what Client makes of it.
func TestProviderWireFormat(t *testing.T) {
	srv := httptest.NewServer(demo.NewProvider())
	defer srv.Close()
	body := `{"model":"openai/gpt-5","messages":[
		{"role":"system","content":[{"type":"text","text":"You are codex-executor."},{"type":"text","text":"Phase: execute."}]},
		{"role":"user","content":"go"}],
		"tools":[{"type":"function","function":{"name":"read_file"}},{"type":"function","function":{"name":"run_tests"}}]}`
	resp, err := http.Post(srv.URL+demo.ChatPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Choices []struct {
			Message      map[string]json.RawMessage `json:"message"`
			FinishReason string                     `json:"finish_reason"`
		} `json:"choices"`
		Usage map[string]json.RawMessage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || got.Object != "chat.completion" || got.Created == 0 || len(got.Choices) != 1 {
		t.Fatalf("status %d, body %+v", resp.StatusCode, got)
	}
	msg := got.Choices[0].Message
	if string(msg["content"]) != "null" || string(msg["role"]) != `"assistant"` || msg["tool_calls"] == nil {
		t.Errorf("message %s, want an assistant message with null content and tool_calls", msg)
	}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details", "cost"} {
		if got.Usage[k] == nil {
			t.Errorf("usage lacks %s: %s", k, got.Usage)
		}
	}
}

func TestProviderUsage(t *testing.T) {
	c := newClient(t, demo.NewProvider())
	for _, tc := range []struct {
		model               string
		usage, cost, reason bool
	}{
		{"claude-sonnet-4-5", true, false, false},
		{"gpt-5-codex", true, false, true},
		{"openai/gpt-5", true, true, true},
		{"anthropic/claude-opus-4.1", true, true, false},
		{"qwen2.5-coder:32b", false, false, false},
		{"some-unknown-model", true, false, false},
	} {
		resp, err := c.Chat(context.Background(), demo.ChatRequest{Model: tc.model, Messages: []demo.Message{
			system("claude-planner", "plan"), {Role: "user", Content: "Plan the fix."},
		}})
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		u := resp.Usage
		got := struct{ usage, cost, reason bool }{u != nil, u != nil && u.Cost != nil, u != nil && u.CompletionTokensDetails.ReasoningTokens > 0}
		if got != (struct{ usage, cost, reason bool }{tc.usage, tc.cost, tc.reason}) {
			t.Errorf("%s: usage %v cost %v reasoning %v, want %v %v %v", tc.model, got.usage, got.cost, got.reason, tc.usage, tc.cost, tc.reason)
		}
		if u != nil && (u.PromptTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens) {
			t.Errorf("%s: usage %+v does not add up", tc.model, u)
		}
	}
}

func TestProviderOverloadedOncePerConversation(t *testing.T) {
	c := newClient(t, demo.NewProvider())
	ask := func(user string) error {
		_, err := c.Chat(context.Background(), demo.ChatRequest{Model: "claude-sonnet-4-5", User: user, Messages: []demo.Message{
			system(demo.OverloadedSpeaker, "verify"), {Role: "user", Content: "Verify."},
		}})
		return err
	}
	for i, tc := range []struct {
		user     string
		overload bool
	}{{"thread-1", true}, {"thread-1", false}, {"thread-2", true}, {"thread-1", false}} {
		err := ask(tc.user)
		var apiErr *demo.APIError
		switch {
		case !tc.overload && err != nil:
			t.Errorf("request %d (%s): %v, want success", i, tc.user, err)
		case tc.overload && !errors.As(err, &apiErr):
			t.Errorf("request %d (%s): %v, want an *APIError", i, tc.user, err)
		case tc.overload:
			if apiErr.StatusCode != 529 || apiErr.Type != "overloaded_error" || apiErr.Message != "overloaded" || !apiErr.Retryable() {
				t.Errorf("request %d (%s): %+v, want 529 overloaded_error, retryable", i, tc.user, apiErr)
			}
			if want := "provider returned 529 overloaded_error: overloaded"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		}
	}
}

func TestProviderRejectsBadRequests(t *testing.T) {
	srv := httptest.NewServer(demo.NewProvider())
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		message                  string
	}{
		{"invalid JSON", "POST", demo.ChatPath, `{"model":`, 400, "could not parse the JSON body"},
		{"not an object", "POST", demo.ChatPath, `[1,2]`, 400, "could not parse the JSON body"},
		{"bad content", "POST", demo.ChatPath, `{"model":"m","messages":[{"role":"user","content":42}]}`, 400, "content must be"},
		{"no model", "POST", demo.ChatPath, `{"messages":[{"role":"user","content":"hi"}]}`, 400, "model parameter"},
		{"no messages", "POST", demo.ChatPath, `{"model":"m","messages":[]}`, 400, "at least one message"},
		{"bad role", "POST", demo.ChatPath, `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, 400, `"robot" is not one of`},
		{"unanswered tool call", "POST", demo.ChatPath, `{"model":"m","messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"user","content":"and?"}]}`, 400, "missing: call_1"},
		{"stray tool message", "POST", demo.ChatPath, `{"model":"m","messages":[{"role":"user","content":"hi"},
			{"role":"tool","tool_call_id":"call_9","content":"x"}]}`, 400, "preceding message with 'tool_calls'"},
		{"wrong method", "GET", demo.ChatPath, ``, 405, "not allowed"},
		{"wrong path", "POST", "/v1/completions", `{}`, 404, "Invalid URL"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body struct {
			Error struct{ Message, Type string }
		}
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != tc.status || !strings.Contains(body.Error.Message, tc.message) || body.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %s %s %s\n got %d %s\nwant %d with an invalid_request_error saying %q", tc.name, tc.method, tc.path, tc.body, resp.StatusCode, b, tc.status, tc.message)
		}
	}
}

func TestClientErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		want      string
		retryable bool
	}{
		{"openai error body", 429, `{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`, "provider returned 429 rate_limit_error: Rate limit reached", true},
		{"html from a proxy", 502, "<html>Bad Gateway</html>\n", "provider returned 502: <html>Bad Gateway</html>", true},
		{"empty body", 401, "", "provider returned 401: Unauthorized", false},
	} {
		c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		_, err := c.Chat(context.Background(), demo.ChatRequest{Model: "m", Messages: []demo.Message{{Role: "user", Content: "hi"}}})
		var apiErr *demo.APIError
		if !errors.As(err, &apiErr) || err.Error() != tc.want || apiErr.StatusCode != tc.status || apiErr.Retryable() != tc.retryable {
			t.Errorf("%s: %d %q\n got %v\nwant %q (retryable %v)", tc.name, tc.status, tc.body, err, tc.want, tc.retryable)
		}
	}
}

func TestStartProvider(t *testing.T) {
	srv, err := demo.StartProvider()
	if err != nil {
		t.Fatal(err)
	}
	c := &demo.Client{BaseURL: srv.URL}
	resp, err := c.Chat(context.Background(), demo.ChatRequest{Model: "claude-sonnet-4-5", Messages: []demo.Message{
		system("adjudicator", "plan"), {Role: "user", Content: "Choose."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Choices[0].Message.Content, "Decision: plan A") {
		t.Errorf("adjudicator said %q", resp.Choices[0].Message.Content)
	}
	for range 2 { // Shutdown is idempotent
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Chat(context.Background(), demo.ChatRequest{Model: "m", Messages: []demo.Message{{Role: "user", Content: "hi"}}}); err == nil {
		t.Error("the provider still answers after Shutdown")
	}
}
