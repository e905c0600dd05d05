package collector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/instrument/llmhttp"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// storedUsage is the usage columns of a call's response row.
type storedUsage struct{ In, Out, CacheRead, CacheWrite uint32 }

// One call, 100 uncached input tokens, 1,000 read from the cache, 200
// written to it and 50 out, told the way each source tells it, is stored
// the same: input includes the cache. Before the one rule, Claude Code
// stored 100 and a hand-written Anthropic usage 100.
func TestEverySourceStoresTheSameUsage(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	tp, err := collector.NewTracerProvider(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(ctx)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(ctx)

	const model = "claude-sonnet-4-5"
	handWritten := func(u instrument.Usage) func(thread string) {
		return func(thread string) {
			ctx := instrument.WithThread(ctx, thread)
			if _, err := rec.Call(ctx, instrument.Turn{Provider: "anthropic", Model: model, Prompt: "hi"},
				func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "ok", Usage: &u}, nil
				}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// replay runs a CLI agent that prints lines, in format.
	replay := func(format cliagent.Format, lines string) func(thread string) {
		return func(thread string) {
			path := filepath.Join(t.TempDir(), "run.jsonl")
			if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := cliagent.Command(instrument.WithThread(ctx, thread), exec.Command("cat", path), instrument.Turn{Prompt: "hi"},
				cliagent.WithRecorder(rec), cliagent.WithFormat(format)); err != nil {
				t.Fatal(err)
			}
		}
	}
	claudeCode := replay(cliagent.FormatClaude, `{"type":"system","subtype":"init","session_id":"s1","model":"`+model+`","tools":[]}
{"type":"assistant","message":{"model":"`+model+`","content":[{"type":"text","text":"ok"}]},"session_id":"s1"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"result":"ok","session_id":"s1","usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":50}}
`)
	// viaLLMHTTP sends one request through llmhttp to a provider that
	// answers answer.
	viaLLMHTTP := func(path, request, answer string) func(thread string) {
		return func(thread string) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, answer)
			}))
			defer srv.Close()
			client := &http.Client{Transport: llmhttp.NewTransport(nil, llmhttp.WithRecorder(rec))}
			req, _ := http.NewRequestWithContext(instrument.WithThread(ctx, thread), http.MethodPost, srv.URL+path, strings.NewReader(request))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	anthropicHTTP := viaLLMHTTP("/v1/messages", `{"model":"`+model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		`{"id":"msg_1","type":"message","role":"assistant","model":"`+model+`","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":50}}`)
	otlp := func(attrs ...*commonpb.KeyValue) func(thread string) {
		return func(thread string) {
			start := uint64(time.Now().UnixNano())
			id := fmt.Sprintf("%016x", start)
			span := &tracepb.Span{
				TraceId: mustHex(fmt.Sprintf("%032x", start)), SpanId: mustHex(id),
				Name: "chat " + model, Kind: tracepb.Span_SPAN_KIND_CLIENT,
				StartTimeUnixNano: start, EndTimeUnixNano: start + uint64(time.Second),
				Attributes: append(attrs, kv("gen_ai.conversation.id", thread), kv("session.id", thread)),
			}
			if _, err := in.Traces(ctx, []*tracepb.ResourceSpans{{Resource: otlpResource,
				ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span}}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	genAI := otlp(kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "anthropic"), kv("gen_ai.request.model", model),
		kv("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`),
		kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]`),
		ikv("gen_ai.usage.input_tokens", 1300), ikv("gen_ai.usage.output_tokens", 50),
		ikv("gen_ai.usage.cache_read.input_tokens", 1000), ikv("gen_ai.usage.cache_write.input_tokens", 200))
	openLLMetry := otlp(kv("gen_ai.system", "Anthropic"), kv("llm.request.type", "chat"), kv("gen_ai.request.model", model),
		kv("gen_ai.prompt.0.role", "user"), kv("gen_ai.prompt.0.content", "hi"),
		kv("gen_ai.completion.0.role", "assistant"), kv("gen_ai.completion.0.content", "ok"),
		ikv("gen_ai.usage.prompt_tokens", 1300), ikv("gen_ai.usage.completion_tokens", 50),
		ikv("gen_ai.usage.cache_read_input_tokens", 1000), ikv("gen_ai.usage.cache_creation_input_tokens", 200))
	openInference := otlp(kv("openinference.span.kind", "LLM"), kv("llm.provider", "anthropic"), kv("llm.model_name", model),
		kv("llm.input_messages.0.message.role", "user"), kv("llm.input_messages.0.message.content", "hi"),
		kv("llm.output_messages.0.message.role", "assistant"), kv("llm.output_messages.0.message.content", "ok"),
		ikv("llm.token_count.prompt", 1300), ikv("llm.token_count.completion", 50),
		ikv("llm.token_count.prompt_details.cache_read", 1000), ikv("llm.token_count.prompt_details.cache_write", 200))

	codex := replay(cliagent.FormatCodex, `{"type":"thread.started","thread_id":"th_1"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"ok"}}
{"type":"turn.completed","usage":{"input_tokens":1100,"cached_input_tokens":1000,"output_tokens":50}}
`)
	openAIHTTP := viaLLMHTTP("/v1/chat/completions", `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-5","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":1100,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":1000}}}`)
	// Sources whose provider writes no cache tokens: 100 uncached, 1,000
	// read, 50 out.
	readOnly := storedUsage{In: 1100, Out: 50, CacheRead: 1000}
	sources := []struct {
		name string
		send func(thread string)
		want *storedUsage
	}{
		{"Codex exec --json", codex, &readOnly},
		{"llmhttp OpenAI Chat Completions", openAIHTTP, &readOnly},
		{"instrument.Usage, no cache writes", handWritten(instrument.Usage{InputTokens: 1100, OutputTokens: 50, CacheReadTokens: 1000}), &readOnly},
		{"instrument.Usage, input with cache", handWritten(instrument.Usage{InputTokens: 1300, OutputTokens: 50, CacheReadTokens: 1000, CacheWriteTokens: 200}), nil},
		{"instrument.Usage, Anthropic's input", handWritten(instrument.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 1000, CacheWriteTokens: 200}), nil},
		{"Claude Code stream-json", claudeCode, nil},
		{"llmhttp Anthropic Messages", anthropicHTTP, nil},
		{"OTel GenAI", genAI, nil},
		{"OpenLLMetry", openLLMetry, nil},
		{"OpenInference", openInference, nil},
	}
	for i, src := range sources {
		want := storedUsage{In: 1300, Out: 50, CacheRead: 1000, CacheWrite: 200}
		if src.want != nil {
			want = *src.want
		}
		thread := fmt.Sprintf("usage-%d", i)
		src.send(thread)
		var got storedUsage
		deadline := time.Now().Add(10 * time.Second)
		for {
			row := conn.QueryRow(ctx, `SELECT ifNull(tokens_in, 0), ifNull(tokens_out, 0), ifNull(tokens_cache_read, 0), ifNull(tokens_cache_write, 0)
FROM conversations FINAL WHERE thread_id = ? AND cost_source != ''`, thread)
			err := row.Scan(&got.In, &got.Out, &got.CacheRead, &got.CacheWrite)
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("%s: no call row: %v", src.name, err)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got != want {
			t.Errorf("%s: stored %+v, want %+v", src.name, got, want)
		}
	}
}

// A failed call counts as a call and keeps the input it reported on its
// error turn, as on its span: the thread and the trace agree. A call that
// reports no usage counts too, its tokens unknown.
func TestEveryCallCountsOnce(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := instrument.WithThread(context.Background(), "calls-count")
	tp, err := collector.NewTracerProvider(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	_, _ = rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "verify"},
		func(context.Context) (instrument.Response, error) {
			return instrument.Response{Usage: &instrument.Usage{InputTokens: 500}}, fmt.Errorf("stream cut")
		})
	_, _ = rec.Call(ctx, instrument.Turn{Provider: "ollama", Model: "qwen2.5-coder:32b", Prompt: "review"},
		func(context.Context) (instrument.Response, error) { return instrument.Response{Content: "fine"}, nil })
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(context.Background(), `SELECT c.role, c.cost_source, ifNull(toString(c.tokens_in), '-'), ifNull(toString(s.tokens_in), '-')
FROM (SELECT span_id, role, cost_source, tokens_in FROM conversations FINAL WHERE thread_id = 'calls-count' AND cost_source != '') AS c
ANY LEFT JOIN (SELECT span_id, tokens_in FROM spans FINAL WHERE thread_id = 'calls-count') AS s USING span_id
ORDER BY c.role`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var role, source, turnIn, spanIn string
		if err := rows.Scan(&role, &source, &turnIn, &spanIn); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{role, source, turnIn, spanIn}, " "))
	}
	want := []string{"error priced 500 500", "response none - -"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("call rows (role, cost source, turn tokens in, span tokens in):\n got %q\nwant %q", got, want)
	}
}

// A resumed agent run that failed in words no matcher knows is counted,
// whichever path stores it: the warning turn carries its code.
func TestResumeFailuresUnrecognisedCounted(t *testing.T) {
	_, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn)
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	_, call := rec.Start(instrument.WithThread(context.Background(), "th"), instrument.Turn{Provider: "anthropic", Prompt: "go on"})
	call.AddTurn(time.Now(), cliagent.KindWarning, "Error: the moon is in the wrong phase",
		attribute.String(schema.KeyCode, cliagent.CodeResumeFailedUnrecognised))
	call.End(instrument.Response{}, errors.New("exit status 1"))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := tp.Stats().ResumeFailuresUnrecognised; n != 1 {
		t.Errorf("ResumeFailuresUnrecognised = %d, want 1", n)
	}
}
