package demo_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
)

func ExampleRun() {
	ctx := context.Background()
	srv, err := demo.StartProvider()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(ctx)

	// collector.NewTracerProvider(dsn, collector.WithProject("demo"))
	// stores the spans in ClickHouse; this one drops them.
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(ctx)

	res, err := demo.Run(ctx, instrument.NewRecorder(instrument.WithTracerProvider(tp)), srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("chosen plan:", res.Chosen)
	for _, c := range res.Calls {
		status := "ok"
		if c.Err != nil {
			status = c.Err.Error()
		}
		fmt.Printf("%-8s %d %-15s %s\n", c.Phase, c.Round, c.Speaker, status)
	}
	for _, t := range res.Tools {
		fmt.Println("tool", t.Name)
	}
	// Output:
	// chosen plan: A
	// plan     0 claude-planner  ok
	// plan     0 codex-planner   ok
	// plan     0 codex-critic    ok
	// plan     0 claude-critic   ok
	// plan     0 adjudicator     ok
	// review   0 reviewer        ok
	// revision 1 claude-planner  ok
	// review   1 reviewer        ok
	// execute  0 codex-executor  ok
	// execute  0 codex-executor  ok
	// execute  0 codex-executor  ok
	// verify   0 claude-verifier provider returned 529 overloaded_error: overloaded
	// verify   0 claude-verifier ok
	// tool read_file
	// tool run_tests
	// tool apply_patch
	// tool run_tests
}
