package cliagent_test

import (
	"context"
	"fmt"
	"os/exec"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
)

// An agent run recorded as an invoke_agent span with a chat span per
// provider call and a tool span per tool use, each tool after the call
// that asked for it. In a
// pipeline the tracer provider comes from collector.NewTracerProvider and
// the command is, say, exec.Command("claude", "-p", prompt,
// "--output-format", "stream-json", "--verbose").
func ExampleCommand() {
	sr := tracetest.NewSpanRecorder()
	rec := instrument.NewRecorder(instrument.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))

	cmd := exec.Command("cat", "testdata/claude.jsonl") // replays a recorded Claude Code run
	ctx := instrument.WithThread(context.Background(), "issue-42")
	code, err := cliagent.Command(ctx, cmd, instrument.Turn{Prompt: "Why does TestParseConfig fail?", Phase: "plan"},
		cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatClaude))
	if err != nil {
		panic(err)
	}
	fmt.Println("exit code", code)
	for _, s := range sr.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// exit code 0
	// chat claude-sonnet-4-5-20250929
	// execute_tool Bash
	// chat claude-sonnet-4-5-20250929
	// execute_tool Read
	// chat claude-sonnet-4-5-20250929
	// invoke_agent
}
