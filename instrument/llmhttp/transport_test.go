package llmhttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/llmhttp"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fakeServer replays the testdata file named by the X-Fixture request
// header, with the status in X-Status (200 when absent), and keeps the
// request bodies it received.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	received map[string][]byte // by fixture
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{received: map[string][]byte{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Header.Get("X-Fixture")
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.received[name] = body
		f.mu.Unlock()
		if name == "" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
			return
		}
		data := fixture(t, name)
		status := http.StatusOK
		if s := r.Header.Get("X-Status"); s != "" {
			status, _ = strconv.Atoi(s)
		}
		if strings.HasSuffix(name, ".sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(status)
			// Write event by event, flushing, as a provider does.
			for _, ev := range bytes.SplitAfter(data, []byte("\n\n")) {
				_, _ = w.Write(ev)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(data)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) body(name string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received[name]
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type row struct {
	Role, Content, Model, Provider               string
	TokensIn, TokensOut, TokensCacheRead         *uint32
	ToolName, ToolCallID, Error, ThreadID, Phase string
}

func (r row) String() string {
	n := func(p *uint32) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s model=%q provider=%q tokens=%s/%s/%s tool=%q/%q error=%q thread=%q phase=%q content=%q",
		r.Role, r.Model, r.Provider, n(r.TokensIn), n(r.TokensOut), n(r.TokensCacheRead), r.ToolName, r.ToolCallID, r.Error, r.ThreadID, r.Phase, r.Content)
}

// setup returns an HTTP client whose calls are recorded, and a function
// that shuts the tracer provider down and returns the rows written.
func setup(t *testing.T) (*http.Client, func() []row) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	client := &http.Client{Transport: llmhttp.NewTransport(nil, llmhttp.WithRecorder(rec))}
	return client, func() []row {
		t.Helper()
		ctx := context.Background()
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		rs, err := conn.Query(ctx, `SELECT role, content, model, provider, tokens_in, tokens_out, tokens_cache_read,
			tool_name, tool_call_id, error, thread_id, phase FROM conversations FINAL ORDER BY start_ns, seq`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.Role, &r.Content, &r.Model, &r.Provider, &r.TokensIn, &r.TokensOut, &r.TokensCacheRead,
				&r.ToolName, &r.ToolCallID, &r.Error, &r.ThreadID, &r.Phase); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			t.Logf("row: %v", r)
		}
		return out
	}
}

func u32(n uint32) *uint32 { return &n }

// want is what a test checks in a row; empty fields are not checked.
type want struct {
	role, model, provider string
	contains              []string
	in, out, cacheRead    *uint32
	toolName, toolCallID  string
	errContains           string
}

func check(t *testing.T, got []row, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d rows, want %d", len(got), len(wants))
	}
	eq := func(a, b *uint32) bool { return b == nil || (a != nil && *a == *b) }
	for i, w := range wants {
		g := got[i]
		ok := g.Role == w.role &&
			(w.model == "" || g.Model == w.model) &&
			(w.provider == "" || g.Provider == w.provider) &&
			eq(g.TokensIn, w.in) && eq(g.TokensOut, w.out) && eq(g.TokensCacheRead, w.cacheRead) &&
			(w.toolName == "" || g.ToolName == w.toolName) &&
			(w.toolCallID == "" || g.ToolCallID == w.toolCallID) &&
			strings.Contains(g.Error, w.errContains)
		for _, c := range w.contains {
			ok = ok && strings.Contains(g.Content, c)
		}
		if !ok {
			t.Errorf("row %d:\n got  %v\n want %+v", i, g, w)
		}
	}
}

func weatherTool() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:       "get_weather",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
}

func TestOpenAIChatCompletions(t *testing.T) {
	srv := newFakeServer(t)
	hc, rows := setup(t)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-test"),
		option.WithHTTPClient(hc), option.WithMaxRetries(0))
	ctx := instrument.WithThread(context.Background(), "issue-4")
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather in Paris?")}

	// Non-streamed, answered with a tool call.
	comp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs, Tools: weatherTool()},
		option.WithHeader("X-Fixture", "openai_chat_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.Choices[0].Message.ToolCalls[0].Function.Name; got != "get_weather" {
		t.Errorf("client saw tool %q", got)
	}

	// Streamed text with usage in the final chunk.
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}},
		option.WithHeader("X-Fixture", "openai_chat_stream.sse"))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if got := acc.Choices[0].Message.Content; got != "Rainy, 14°C in Paris." {
		t.Errorf("client saw %q", got)
	}

	// Streamed tool call with reasoning tokens.
	stream = client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "o4-mini", Messages: msgs, Tools: weatherTool(),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}},
		option.WithHeader("X-Fixture", "openai_chat_stream_tool.sse"))
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()

	// Rate limited.
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs},
		option.WithHeader("X-Fixture", "openai_429.json"), option.WithHeader("X-Status", "429"))
	if err == nil {
		t.Fatal("429 not reported to the client")
	}

	// The collector gives both turns of a call the model that answered,
	// when the provider says; a failed call keeps the requested one.
	prompt := []string{`"Be brief."`, `"Weather in Paris?"`, `"role":"system"`}
	check(t, rows(), []want{
		{role: schema.RolePrompt, model: "gpt-4o-2024-08-06", provider: "openai-compatible", contains: prompt},
		{role: schema.RoleResponse, model: "gpt-4o-2024-08-06", in: u32(82), out: u32(17), cacheRead: u32(64),
			contains: []string{`"name":"get_weather"`, `"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA"`, `"arguments":{"city":"Paris"}`, `"finish_reason":"tool_calls"`},
			toolName: "get_weather", toolCallID: "call_DdmO9pD3xa9XTPNJ32zg2hcA"},
		{role: schema.RolePrompt, model: "gpt-4o-mini-2024-07-18", contains: prompt},
		{role: schema.RoleResponse, model: "gpt-4o-mini-2024-07-18", in: u32(1250), out: u32(9), cacheRead: u32(1024),
			contains: []string{"Rainy, 14°C in Paris."}},
		{role: schema.RolePrompt, model: "o4-mini-2025-04-16", contains: prompt},
		{role: schema.RoleResponse, model: "o4-mini-2025-04-16", in: u32(90), out: u32(150), cacheRead: u32(0),
			contains: []string{`"name":"get_weather"`, `"id":"call_kX2bNw8fP1"`, `"arguments":{"city":"Paris"}`}},
		{role: schema.RolePrompt, model: "gpt-4o", contains: prompt},
		{role: schema.RoleError, model: "gpt-4o", errContains: "Rate limit reached for gpt-4o"},
	})
}

func TestAnthropicMessages(t *testing.T) {
	srv := newFakeServer(t)
	hc, rows := setup(t)
	client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
	ctx := instrument.WithPhase(context.Background(), "plan")
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: "You plan fixes."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Plan the fix for #42"))},
	}

	msg, err := client.Messages.New(ctx, params, anthropicoption.WithHeader("X-Fixture", "anthropic_message.json"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "end_turn" {
		t.Errorf("client saw stop reason %q", msg.StopReason)
	}

	stream := client.Messages.NewStreaming(ctx, params, anthropicoption.WithHeader("X-Fixture", "anthropic_stream.sse"))
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if len(acc.Content) != 2 || acc.Content[1].Name != "get_weather" {
		t.Errorf("client assembled %+v", acc.Content)
	}

	_, err = client.Messages.New(ctx, params, anthropicoption.WithHeader("X-Fixture", "anthropic_500.json"), anthropicoption.WithHeader("X-Status", "500"))
	if err == nil {
		t.Fatal("500 not reported to the client")
	}

	prompt := []string{`"You plan fixes."`, `"Plan the fix for #42"`}
	check(t, rows(), []want{
		{role: schema.RolePrompt, model: "claude-sonnet-4-5-20250929", provider: "anthropic", contains: prompt},
		{role: schema.RoleResponse, model: "claude-sonnet-4-5-20250929", in: u32(21 + 188 + 2048), out: u32(24), cacheRead: u32(2048),
			contains: []string{"1. Reproduce the crash in parseConfig."}},
		{role: schema.RolePrompt, contains: prompt},
		{role: schema.RoleResponse, model: "claude-sonnet-4-5-20250929", in: u32(472 + 1800), out: u32(89), cacheRead: u32(1800),
			contains: []string{"Let me check the weather.", `"name":"get_weather"`, `"id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6"`, `"arguments":{"city":"Paris"}`},
			toolName: "get_weather", toolCallID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6"},
		{role: schema.RolePrompt, contains: prompt},
		{role: schema.RoleError, errContains: "Internal server error"},
	})
}

// TestPlainHTTP checks with net/http that the client reads the provider's
// bytes exactly, the server receives the request body unchanged, and calls
// the transport does not know pass through untraced.
func TestPlainHTTP(t *testing.T) {
	srv := newFakeServer(t)
	hc, rows := setup(t)
	ctx := instrument.WithThread(context.Background(), "t-plain")
	ctx = instrument.WithPhase(ctx, "review")

	post := func(path, fixtureName, body string) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if fixtureName != "" {
			req.Header.Set("X-Fixture", fixtureName)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if fixtureName != "" && !bytes.Equal(got, fixture(t, fixtureName)) {
			t.Errorf("%s: client read %q, want the replayed bytes", fixtureName, got)
		}
		if sent := srv.body(fixtureName); string(sent) != body {
			t.Errorf("%s: server received %q, want %q", path, sent, body)
		}
		return got
	}

	chat := `{"model":"llama3.2","messages":[{"role":"user","content":"Weather in Paris?"}] ,"stream":true}`
	post("/api/v1/chat/completions", "openai_chat_stream.sse", chat)
	responses := `{"model":"gpt-4.1","instructions":"Answer in one sentence.","input":"Tell me a bedtime story."}`
	post("/v1/responses", "openai_responses.json", responses)
	post("/v1/embeddings", "", `{"model":"text-embedding-3-small","input":"x"}`) // not a chat call
	post("/v1/chat/completions", "", `{"not":"a chat request"}`)                 // right path, wrong body

	got := rows()
	check(t, got, []want{
		{role: schema.RolePrompt, model: "gpt-4o-mini-2024-07-18", provider: "openai-compatible", contains: []string{"Weather in Paris?"}},
		{role: schema.RoleResponse, model: "gpt-4o-mini-2024-07-18", in: u32(1250), out: u32(9), contains: []string{"Rainy, 14°C in Paris."}},
		{role: schema.RolePrompt, model: "gpt-4.1-2025-04-14", provider: "openai", contains: []string{"Answer in one sentence.", "Tell me a bedtime story."}},
		{role: schema.RoleResponse, model: "gpt-4.1-2025-04-14", in: u32(36), out: u32(87), contains: []string{"The unicorn slept under a silver moon."}},
	})
	for _, r := range got {
		if r.ThreadID != "t-plain" || r.Phase != "review" {
			t.Errorf("row %v: want thread t-plain, phase review from the context", r)
		}
	}
}

// TestTransportError checks that a failed round trip is returned unchanged
// and recorded as an error.
func TestTransportError(t *testing.T) {
	hc, rows := setup(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	_, err := hc.Post(url+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	if err == nil {
		t.Fatal("want a connection error")
	}
	check(t, rows(), []want{
		{role: schema.RolePrompt, model: "claude-haiku-4-5", provider: "anthropic", contains: []string{"hi"}},
		{role: schema.RoleError, errContains: "connect"},
	})
}
