package cliagent

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// Format names the output format of an agent.
type Format string

// Formats Command reads.
const (
	FormatAuto   Format = ""       // decided from the first line of stdout
	FormatClaude Format = "claude" // Claude Code --output-format stream-json
	FormatCodex  Format = "codex"  // codex exec --json
	FormatPlain  Format = "plain"  // any other command: stdout is the response
)

// StderrTail is how much of the end of an agent's stderr an error turn
// keeps.
const StderrTail = 8 << 10

type config struct {
	rec      *instrument.Recorder
	format   Format
	rejected string // the session a retried run's first attempt was refused
}

// Option configures Command.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRecorder records with r instead of a Recorder on the global tracer
// provider.
func WithRecorder(r *instrument.Recorder) Option {
	return optionFunc(func(c *config) { c.rec = r })
}

// WithFormat reads the agent's stdout as f instead of guessing it.
func WithFormat(f Format) Option {
	return optionFunc(func(c *config) { c.format = f })
}

// WithRetryAfterRejected records the run as the retry, without resuming,
// of a run whose agent rejected session: its first turn says so.
func WithRetryAfterRejected(session string) Option {
	return optionFunc(func(c *config) { c.rejected = session })
}

// Command runs cmd, an agent, and records its run as one call described by
// turn (an empty Prompt is taken from cmd's arguments, else its stdin). Its
// stdio passes through unchanged, stdout read as it streams. It returns the
// exit code (-1 when killed by a signal or not started) and cmd.Run's error
// (an *exec.ExitError when the agent exited non-zero).
func Command(ctx context.Context, cmd *exec.Cmd, turn instrument.Turn, opts ...Option) (int, error) {
	cfg := config{}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.rec == nil {
		cfg.rec = instrument.NewRecorder()
	}
	format := cfg.format
	if format == FormatAuto {
		format = formatFromArgs(cmd.Args)
	}
	if turn.Prompt == "" {
		turn.Prompt = promptFromArgs(cmd.Args, format)
	}
	if turn.Prompt == "" && cmd.Stdin != nil && !isTerminal(cmd.Stdin) {
		// The prompt row is written as the agent starts, so a piped
		// prompt is read first; the agent still gets every byte.
		b, err := io.ReadAll(cmd.Stdin)
		if err != nil {
			return -1, fmt.Errorf("read stdin: %w", err)
		}
		turn.Prompt = string(b)
		cmd.Stdin = bytes.NewReader(b)
	}
	if turn.Operation == "" {
		turn.Operation = schema.OperationInvokeAgent
	}
	if turn.SessionID == "" {
		// Known before the agent says it, the session is on the prompt
		// from its first row.
		turn.SessionID = KnownSession(cmd.Args)
	}
	if turn.Provider == "" {
		turn.Provider = provider(format)
	}
	if turn.Model == "" && (format == FormatCodex || format == FormatAuto && agentFormat(cmd.Path) == FormatCodex) {
		turn.Model = codexModel(cmd.Args, cmd.Env)
	}

	if format == FormatClaude || format == FormatCodex || agentFormat(cmd.Path) != FormatAuto {
		cmd.Env = markTelemetry(cmd.Env)
	}

	// The context of the call carries the turn's overrides of thread,
	// phase, speaker and agent, so its tool spans have them too.
	ctx, call := cfg.rec.Start(ctx, turn)
	defer call.EndOnPanic()
	r := newRun(ctx, cfg.rec, call, format, cmd.Stdout)
	r.model = turn.Model
	if f := cmp.Or(format, agentFormat(cmd.Path), formatFromArgs(cmd.Args)); f != FormatAuto {
		r.resumed = resumedSession(f, cmd.Args)
	}
	if cfg.rejected != "" {
		r.addTurn(Event{Kind: KindWarning, Code: CodeResumeRetry, Rejected: cfg.rejected,
			Content: "run again without resuming: the agent rejected session " + cfg.rejected}, time.Now())
	}
	if format == FormatCodex || format == FormatAuto && agentFormat(cmd.Path) == FormatCodex {
		r.codex.resumes = codexResumes(cmd.Args)
		r.codex.home = codexHome(cmd.Env)
	}
	if formatFromArgs(cmd.Args) == FormatClaude && !slices.Contains(cmd.Args, "--include-partial-messages") &&
		(slices.Contains(cmd.Args, "-p") || slices.Contains(cmd.Args, "--print")) {
		// Each provider call's output tokens come only in the stream
		// events: asked for, read, and kept from the caller's stdout.
		cmd.Args = append(cmd.Args, "--include-partial-messages")
		r.hidePartials = true
	}
	stderr := &tail{w: cmd.Stderr}
	cmd.Stdout, cmd.Stderr = r, stderr
	runErr := cmd.Run()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	call.End(r.finish(runErr, cmd.ProcessState, stderr.String()))
	if r.resumeFailed {
		return code, errors.Join(runErr, ErrSessionResumeInvalid)
	}
	return code, runErr
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err != nil || st.Mode()&os.ModeCharDevice != 0
}

// tail is the agent's stderr: every byte passes on, the last StderrTail
// bytes are kept.
type tail struct {
	w   io.Writer
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	var err error
	if t.w != nil {
		n, err = t.w.Write(p)
	}
	t.buf = append(t.buf, p[:n]...)
	if len(t.buf) > StderrTail {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-StderrTail:]...)
	}
	return n, err
}

func (t *tail) String() string { return string(t.buf) }

// markTelemetry returns env (os.Environ when nil) with the agent's own
// OpenTelemetry resource marked as recorded by this run
// (schema.KeyRecordedBy in OTEL_RESOURCE_ATTRIBUTES): a collector that
// gets the agent's telemetry too then leaves its calls to the run, so
// each is stored once.
func markTelemetry(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	const key = "OTEL_RESOURCE_ATTRIBUTES"
	mark := schema.KeyRecordedBy + "=convtrace-run"
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			if strings.TrimSpace(v) != "" {
				mark = v + "," + mark
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, key+"="+mark)
}
