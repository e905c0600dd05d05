package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/schema"
)

func runAgentCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	otlp := fs.String("otlp", "", "send spans over OTLP/HTTP to a running collector, e.g. http://127.0.0.1:4318, instead of writing to ClickHouse")
	thread := fs.String("thread", "", "thread the run belongs to (default: its own)")
	phase := fs.String("phase", "", "pipeline phase, e.g. execute")
	round := fs.Int("round", 0, "revision round")
	speaker := fs.String("speaker", "", "who speaks, e.g. claude-executor")
	project := fs.String("project", "default", "project the run belongs to")
	format := fs.String("format", "auto", "agent output format: auto, claude, codex or plain")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: convtrace run [flags] -- COMMAND [ARGS...]")
		fmt.Fprintln(fs.Output(), "Runs COMMAND with its stdin, stdout and stderr passed through unchanged, records one turn per thing it says, and exits with its exit code.")
		fs.PrintDefaults()
	}
	return func(ctx context.Context, io streams, args []string) error {
		if len(args) == 0 {
			return errors.New("no command to run: convtrace run [flags] -- COMMAND [ARGS...]")
		}
		formats := map[string]cliagent.Format{"auto": cliagent.FormatAuto, "claude": cliagent.FormatClaude, "codex": cliagent.FormatCodex, "plain": cliagent.FormatPlain}
		f, ok := formats[*format]
		if !ok {
			return fmt.Errorf("--format %q: want auto, claude, codex or plain", *format)
		}
		var tp *sdktrace.TracerProvider
		if *otlp != "" {
			exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(*otlp))
			if err != nil {
				return fmt.Errorf("--otlp %q: %w", *otlp, err)
			}
			tp = sdktrace.NewTracerProvider(
				sdktrace.WithResource(resource.NewSchemaless(attribute.String(schema.KeyServiceName, *project), attribute.String(schema.KeyProject, *project))),
				sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()),
				sdktrace.WithBatcher(exp),
			)
		} else {
			st, err := sf.open(ctx, io.stderr)
			if err != nil {
				return err
			}
			defer st.close()
			if tp, err = collector.NewTracerProvider(st.dsn, collector.WithProject(*project)); err != nil {
				return err
			}
		}
		defer func() {
			flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Shutdown(flushCtx); err != nil {
				fmt.Fprintf(io.stderr, "convtrace run: flush: %v\n", err)
			}
		}()

		callCtx := instrument.WithRound(context.Background(), *round)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = io.stdin, io.stdout, io.stderr
		code, err := cliagent.Command(callCtx, cmd, instrument.Turn{Thread: *thread, Phase: *phase, Speaker: *speaker},
			cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))), cliagent.WithFormat(f))
		var exitErr *exec.ExitError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &exitErr):
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal()) // as a shell reports a killed command
			}
			return exitCode(code)
		default:
			return fmt.Errorf("run %s: %w", args[0], err)
		}
	}
}
