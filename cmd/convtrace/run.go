package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/localstore"
)

func runAgentCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	var rf redactFlags
	rf.register(fs)
	otlp := fs.String("otlp", "", "send spans over OTLP/HTTP to a running collector, as OTEL_EXPORTER_OTLP_ENDPOINT: a base URL such as http://127.0.0.1:4318 (spans go to /v1/traces) or the full traces URL, instead of writing to ClickHouse")
	thread := fs.String("thread", "", "thread the run belongs to (default: its own)")
	phase := fs.String("phase", "", "pipeline phase, e.g. execute")
	round := fs.Int("round", 0, "revision round")
	speaker := fs.String("speaker", "", "who speaks, e.g. claude-executor")
	project := fs.String("project", "default", "project the run belongs to")
	format := fs.String("format", "auto", "agent output format: auto, claude, codex or plain")
	agentName := fs.String("agent", "", "the sub-agent this run is, when a pipeline runs one as its own process (the agent of its turns)")
	resume := fs.Bool("resume", false, "continue the thread's current provider session (claude --resume ID, codex exec resume ID); a session the agent rejects is retried once without it")
	var attrs threadAttrs
	fs.Var(&attrs, "attr", "thread attribute KEY=VALUE (repeatable), filterable as attr.KEY=VALUE in the viewer, the API and MCP")
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
		redact, err := rf.option()
		if err != nil {
			return err
		}
		tp, undelivered, stop, err := runProvider(ctx, &sf, *otlp, *project, io.stderr, redact)
		if err != nil {
			return err
		}
		defer stop()
		defer func() {
			flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Shutdown(flushCtx); err != nil {
				fmt.Fprintf(io.stderr, "convtrace run: flush: %v\n", err)
			}
			if line := undelivered(); line != "" {
				fmt.Fprintf(io.stderr, "convtrace run: %s\n", line)
			}
		}()

		callCtx := instrument.WithRound(context.Background(), *round)
		for _, kv := range attrs {
			callCtx = instrument.WithThreadAttr(callCtx, kv[0], kv[1])
		}
		stdin := io.stdin
		if *thread == "" {
			*thread, args = runThread(ctx, &sf, *otlp, args)
		}
		defer printThread(io.stderr, sf.dataDir, *thread)
		attempt := func(args []string, opts ...cliagent.Option) (int, error) {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, io.stdout, io.stderr
			opts = append(opts, cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))), cliagent.WithFormat(f))
			return cliagent.Command(callCtx, cmd, instrument.Turn{Thread: *thread, Phase: *phase, Speaker: *speaker, Agent: *agentName}, opts...)
		}
		runArgs := args
		if *resume {
			if *thread == "" {
				return errors.New("--resume needs --thread: the thread whose session to continue")
			}
			if runArgs, stdin, err = resumeArgs(ctx, &sf, *otlp, *thread, args, stdin); err != nil {
				fmt.Fprintf(io.stderr, "convtrace run: --resume: %v; running without resuming\n", err)
			}
		}
		code, err := attempt(runArgs)
		if errors.Is(err, cliagent.ErrSessionResumeInvalid) && len(runArgs) != len(args) {
			fmt.Fprintln(io.stderr, "convtrace run: the agent rejected the thread's session; running it again without resuming")
			if r, ok := stdin.(*bytes.Reader); ok {
				_, _ = r.Seek(0, 0)
			}
			code, err = attempt(args, cliagent.WithRetryAfterRejected(cliagent.ResumedSession(runArgs)))
		}
		var exitErr *exec.ExitError
		switch {
		case err == nil || errors.Is(err, cliagent.ErrSessionResumeInvalid) && !errors.As(err, &exitErr):
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

// provider is what a run records through: a tracer provider to shut down.
type provider interface {
	trace.TracerProvider
	Shutdown(context.Context) error
}

// runProvider returns a run's tracer provider, a function saying after its
// Shutdown what was not delivered ("" when all was), and one releasing the
// storage. It never connects first, so the agent starts whatever storage's
// state, and spools what is not delivered. Rows are redacted as redact says,
// spooled ones too; over OTLP the collector redacts as it is told.
func runProvider(ctx context.Context, sf *storageFlags, otlp, project string, stderr io.Writer, redact collector.RedactOption) (provider, func() string, func(), error) {
	if otlp != "" {
		endpoint, err := tracesURL(otlp)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--otlp %q: %w", otlp, err)
		}
		// Retries bounded so that a collector that stays down delays the
		// run's exit by seconds, not the SDK's default minute.
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
			Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 5 * time.Second,
		}))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--otlp %q: %w", otlp, err)
		}
		tp, undelivered := spoolingProvider(exp, sf.spoolDir(), project, redact)
		return tp, undelivered, func() {}, nil
	}
	locateCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, err := sf.locate(locateCtx, stderr)
	if err != nil {
		tp, undelivered := spoolingProvider(unreachable{err}, sf.spoolDir(), project, redact)
		return tp, undelivered, func() {}, nil
	}
	tp, err := collector.NewTracerProvider(st.dsn, redact, collector.WithProject(project), collector.WithDurableSpool(sf.spoolDir()),
		collector.WithWriteTimeout(10*time.Second), collector.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		st.close()
		return nil, nil, nil, err
	}
	undelivered := func() string {
		s := tp.Stats()
		return undeliveredLine(s.Spooled, s.Lost, s.LastError, sf.spoolDir())
	}
	return tp, undelivered, st.close, nil
}

// undeliveredLine is the one line a run prints about rows it did not
// deliver, or "" when it delivered everything.
func undeliveredLine(spooled, lost int64, reason, dir string) string {
	switch {
	case lost > 0:
		return fmt.Sprintf("%d rows not delivered and lost (%s); %d spooled in %s", lost, reason, spooled, dir)
	case spooled > 0:
		return fmt.Sprintf("%d rows not delivered (%s); spooled in %s, stored by the next convtrace run or serve with this --data", spooled, reason, dir)
	}
	return ""
}

// spoolingProvider records through exp, spooling what it fails to export
// with redact's redaction.
func spoolingProvider(exp sdktrace.SpanExporter, dir, project string, redact collector.RedactOption) (provider, func() string) {
	sp := &spoolOnError{next: exp, dir: dir, redact: redact}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String(schema.KeyServiceName, project), attribute.String(schema.KeyProject, project))),
		sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()),
		sdktrace.WithBatcher(sp),
	)
	return tp, sp.undelivered
}

// spoolOnError exports through next and, when that fails after its own
// retries, spools the spans' rows (mapped as the collector maps them) for
// a later run or serve on the data folder to store in ClickHouse.
type spoolOnError struct {
	next   sdktrace.SpanExporter
	dir    string
	redact collector.RedactOption

	mu            sync.Mutex
	spooled, lost int64
	reason        error
}

func (s *spoolOnError) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := s.next.ExportSpans(ctx, spans)
	if err == nil {
		return nil
	}
	n, spoolErr := collector.SpoolSpans(s.dir, spans, s.redact)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reason = err
	if spoolErr != nil {
		s.lost += int64(len(spans))
		s.reason = fmt.Errorf("%w; spool: %w", err, spoolErr)
	}
	s.spooled += int64(n)
	return nil // said once by undelivered, not by the SDK's error handler per batch
}

func (s *spoolOnError) Shutdown(ctx context.Context) error { return s.next.Shutdown(ctx) }

func (s *spoolOnError) undelivered() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == nil {
		return ""
	}
	return undeliveredLine(s.spooled, s.lost, s.reason.Error(), s.dir)
}

// unreachable exports nothing, failing with why storage could not be found.
type unreachable struct{ err error }

func (u unreachable) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return u.err }
func (unreachable) Shutdown(context.Context) error                               { return nil }

// tracesURL turns an OTLP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes,
// into its traces endpoint; a URL already ending in /v1/traces is kept.
func tracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", errors.New("want an http(s) URL such as http://127.0.0.1:4318")
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// resumeArgs returns the agent's command line resuming the thread's current
// session of the agent's provider, unchanged when the thread has none, and
// the agent's stdin read into memory, so that a retry without resuming
// gets it again.
func resumeArgs(ctx context.Context, sf *storageFlags, otlp, thread string, args []string, stdin io.Reader) ([]string, io.Reader, error) {
	if f, ok := stdin.(*os.File); ok && f != nil {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
			b, err := io.ReadAll(f)
			if err != nil {
				return args, stdin, fmt.Errorf("read stdin: %w", err)
			}
			stdin = bytes.NewReader(b)
		}
	}
	provider := cliagent.ResumeProvider(args)
	if provider == "" {
		return args, stdin, fmt.Errorf("%s is not Claude Code (claude) or Codex (codex exec)", args[0])
	}
	if otlp != "" && sf.dsn == "" {
		return args, stdin, errors.New("the thread's session is read from ClickHouse: give --clickhouse beside --otlp")
	}
	lookupCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, err := sf.openExisting(lookupCtx, io.Discard)
	if err != nil {
		return args, stdin, err
	}
	defer st.close()
	session, err := store.CurrentSession(lookupCtx, st.conn, thread, provider)
	if err != nil || session == "" {
		return args, stdin, err
	}
	resumed, _ := cliagent.ResumeArgs(args, session)
	return resumed, stdin, nil
}

// threadAttrs is the value of run's repeatable --attr KEY=VALUE.
type threadAttrs [][2]string

func (a *threadAttrs) String() string {
	parts := make([]string, 0, len(*a))
	for _, kv := range *a {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, ",")
}

// Map is the attributes by key, the last value of a key repeated.
func (a threadAttrs) Map() map[string]string {
	m := make(map[string]string, len(a))
	for _, kv := range a {
		m[kv[0]] = kv[1]
	}
	return m
}

func (a *threadAttrs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return fmt.Errorf("%q: want KEY=VALUE", s)
	}
	if strings.ContainsAny(k, " \t\n") {
		return fmt.Errorf("%q: a key has no spaces", s)
	}
	*a = append(*a, [2]string{k, v})
	return nil
}

// runThread is the thread of a run given no --thread: the thread that
// already holds the session the command resumes, when the store says;
// else a new id. A new Claude Code session is given that id (--session-id),
// so the thread and the session are one, whichever telemetry reports it.
func runThread(ctx context.Context, sf *storageFlags, otlp string, args []string) (string, []string) {
	if session := cliagent.ResumedSession(args); session != "" {
		if otlp == "" || sf.dsn != "" {
			lookupCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if st, err := sf.openExisting(lookupCtx, io.Discard); err == nil {
				defer st.close()
				if th, err := store.ThreadOfSession(lookupCtx, st.conn, session); err == nil && th != "" {
					return th, args
				}
			}
		}
		return session, args
	}
	id := uuid.NewString()
	if withID, ok := cliagent.NewSessionArgs(args, id); ok {
		return id, withID
	}
	return id, args
}

// printThread says on stderr, in one line, where the run was recorded: the
// thread's page when a viewer serves the data folder, else its id.
func printThread(w io.Writer, data, thread string) {
	if e, ok := localstore.ServeEndpoints(data); ok && e.Viewer != "" {
		fmt.Fprintf(w, "convtrace run: recorded in %s/threads/%s\n", strings.TrimSuffix(e.Viewer, "/"), url.PathEscape(thread))
		return
	}
	fmt.Fprintf(w, "convtrace run: recorded in thread %s (convtrace serve shows it)\n", thread)
}
