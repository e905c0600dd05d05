package llmhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/llmhttp"
)

// replay serves body for every request, standing in for a provider.
func replay(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
}

// printSpan prints a recorded call: its name, events and token counts.
func printSpan(s sdktrace.ReadOnlySpan) {
	fmt.Println(s.Name())
	for _, e := range s.Events() {
		fmt.Println(e.Name)
	}
	for _, a := range s.Attributes() {
		if strings.HasPrefix(string(a.Key), "gen_ai.usage.") && a.Value.AsInt64() > 0 {
			fmt.Println(a.Key, a.Value.AsInt64())
		}
	}
}

// An openai-go client whose calls are recorded: pass it an *http.Client
// with the transport. In a pipeline the recorder's tracer provider comes
// from collector.NewTracerProvider, or leave WithRecorder out to use the
// global one.
func ExampleNewTransport_openai() {
	srv := replay("application/json", `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-2024-08-06",
		"choices":[{"index":0,"message":{"role":"assistant","content":"Rainy, 14°C."},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":20,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":16}}}`)
	defer srv.Close()
	sr := tracetest.NewSpanRecorder()
	rec := instrument.NewRecorder(instrument.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))

	client := openai.NewClient(
		option.WithBaseURL(srv.URL+"/v1/"), // leave out to call api.openai.com
		option.WithAPIKey("sk-example"),
		option.WithHTTPClient(&http.Client{Transport: llmhttp.NewTransport(nil, llmhttp.WithRecorder(rec))}),
	)
	ctx := instrument.WithThread(context.Background(), "issue-42")
	ctx = instrument.WithPhase(ctx, "review")
	comp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(comp.Choices[0].Message.Content)
	printSpan(sr.Ended()[0])
	// Output:
	// Rainy, 14°C.
	// chat gpt-4o
	// gen_ai.prompt
	// gen_ai.response
	// gen_ai.usage.input_tokens 20
	// gen_ai.usage.output_tokens 5
	// gen_ai.usage.cache_read.input_tokens 16
}

// An anthropic-sdk-go client streaming its answer: the stream is recorded
// as one response, and the span ends when the stream is closed.
func ExampleNewTransport_anthropic() {
	srv := replay("text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"1. Reproduce"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" 2. Fix"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}}

event: message_stop
data: {"type":"message_stop"}

`)
	defer srv.Close()
	sr := tracetest.NewSpanRecorder()
	rec := instrument.NewRecorder(instrument.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))

	client := anthropic.NewClient(
		anthropicoption.WithBaseURL(srv.URL), // leave out to call api.anthropic.com
		anthropicoption.WithAPIKey("sk-ant-example"),
		anthropicoption.WithHTTPClient(&http.Client{Transport: llmhttp.NewTransport(nil, llmhttp.WithRecorder(rec))}),
	)
	ctx := instrument.WithSpeaker(context.Background(), "claude-planner")
	stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Plan the fix for #42"))},
	})
	var msg anthropic.Message
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	if err := stream.Err(); err != nil {
		panic(err)
	}
	stream.Close()
	fmt.Println(msg.Content[0].Text)
	printSpan(sr.Ended()[0])
	// Output:
	// 1. Reproduce 2. Fix
	// chat claude-sonnet-4-5
	// gen_ai.prompt
	// gen_ai.response
	// gen_ai.usage.input_tokens 12
	// gen_ai.usage.output_tokens 6
}
