package instrument_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/instrument"
)

// A provider call recorded as one span with a prompt and a response event.
// In a pipeline the tracer provider comes from collector.NewTracerProvider.
func ExampleCall() {
	sr := tracetest.NewSpanRecorder()
	rec := instrument.NewRecorder(instrument.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))

	ctx := instrument.WithThread(context.Background(), "issue-42")
	ctx = instrument.WithPhase(ctx, "plan")
	ctx = instrument.WithSpeaker(ctx, "claude-planner")
	resp, err := rec.Call(ctx, instrument.Turn{Provider: "anthropic", Model: "claude-sonnet-4-5", Prompt: "Plan the fix for #42"},
		func(ctx context.Context) (instrument.Response, error) {
			// Call the provider here.
			return instrument.Response{Content: "1. Reproduce\n2. Fix parseConfig", Usage: &instrument.Usage{InputTokens: 12, OutputTokens: 9}}, nil
		})
	if err != nil {
		panic(err)
	}
	s := sr.Ended()[0]
	fmt.Println(s.Name())
	for _, e := range s.Events() {
		fmt.Println(e.Name)
	}
	fmt.Println(resp.Content)
	// Output:
	// chat claude-sonnet-4-5
	// gen_ai.prompt
	// gen_ai.response
	// 1. Reproduce
	// 2. Fix parseConfig
}
