package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/store"
)

func demoCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	var rf redactFlags
	rf.register(fs)
	return func(ctx context.Context, out streams, _ []string) error {
		redact, err := rf.option()
		if err != nil {
			return err
		}
		st, err := sf.open(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		thread, err := recordDemo(ctx, st, out.stderr, redact)
		if err != nil {
			return err
		}
		fmt.Fprintln(out.stdout, thread)
		return nil
	}
}

// demoProject is the project demo runs are recorded in.
const demoProject = "demo"

// demoOnce records a demo run unless the store holds one (or again says
// to), and returns the thread to open.
func demoOnce(ctx context.Context, st *storage, out streams, redact collector.RedactOption, again bool) (string, error) {
	if !again {
		thread, found, err := store.New(st.conn, 0, 0).AnyThread(ctx, demoProject)
		if err != nil {
			return "", err
		}
		if found {
			fmt.Fprintf(out.stderr, "the store holds a demo run already (serve --demo --demo-again records another)\n")
			fmt.Fprintf(out.stdout, "demo thread %s\n", thread)
			return thread, nil
		}
	}
	thread, err := recordDemo(ctx, st, out.stderr, redact)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(out.stdout, "demo thread %s\n", thread)
	return thread, nil
}

// recordDemo drives one demo pipeline run against a local fake provider,
// exporting in-process to st redacted as redact says, and returns its thread id once its
// rows are stored.
func recordDemo(ctx context.Context, st *storage, progress io.Writer, redact collector.RedactOption) (string, error) {
	provider, err := demo.StartProvider()
	if err != nil {
		return "", fmt.Errorf("start demo provider: %w", err)
	}
	defer provider.Shutdown(context.Background())
	tp, err := collector.NewTracerProvider(st.dsn, redact, collector.WithProject(demoProject))
	if err != nil {
		return "", err
	}
	res, runErr := demo.Run(ctx, instrument.NewRecorder(instrument.WithTracerProvider(tp)), provider.URL)
	flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(flushCtx); err != nil {
		return "", fmt.Errorf("flush demo rows: %w", err)
	}
	if runErr != nil {
		return "", fmt.Errorf("demo pipeline: %w", runErr)
	}
	// The exporter never fails a pipeline, so ask storage what arrived.
	turns, err := store.New(st.conn, 0, 0).TurnCount(ctx, res.ThreadID)
	if err != nil {
		return "", err
	}
	if turns == 0 {
		return "", fmt.Errorf("demo thread %s: no turns were stored (see the errors logged above)", res.ThreadID)
	}
	// Calls are provider calls, counted as the cost report counts them;
	// tool runs are not calls.
	phases, err := store.New(st.conn, 0, 0).PhaseTotals(ctx, res.ThreadID)
	if err != nil {
		return "", err
	}
	var calls store.CostUsage
	for _, p := range phases {
		calls.Add(p.CostUsage)
	}
	fmt.Fprintf(progress, "recorded demo thread %s: %d calls, %d tool runs, %d turns\n", res.ThreadID, calls.Calls, len(res.Tools), turns)
	return res.ThreadID, nil
}
