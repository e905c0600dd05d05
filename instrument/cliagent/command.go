package cliagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

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
	rec    *instrument.Recorder
	format Format
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

// Command runs cmd, an agent, and records its run as one call: turn
// describes it (its Prompt, when empty, is taken from cmd's arguments or,
// failing those, from its stdin). The agent's stdin, stdout and stderr pass
// through unchanged; its stdout is read as it streams for the events of the
// run (see the package documentation).
//
// It returns the agent's exit code (-1 when it was killed by a signal or
// did not start) and the error of cmd.Run: an *exec.ExitError when the
// agent exited non-zero.
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
	if turn.Provider == "" {
		turn.Provider = provider(format)
	}

	// Tool spans take their scope from the context, so the turn's
	// overrides go there too.
	if turn.Thread != "" {
		ctx = instrument.WithThread(ctx, turn.Thread)
	}
	if turn.Phase != "" {
		ctx = instrument.WithPhase(ctx, turn.Phase)
	}
	if turn.Speaker != "" {
		ctx = instrument.WithSpeaker(ctx, turn.Speaker)
	}
	if turn.Agent != "" {
		ctx = instrument.WithAgent(ctx, turn.Agent)
	}

	code := -1
	var runErr error
	resumeFailed := false
	_, _ = cfg.rec.Call(ctx, turn, func(ctx context.Context) (instrument.Response, error) {
		r := newRun(ctx, cfg.rec, format, cmd.Stdout)
		stderr := &tail{w: cmd.Stderr}
		cmd.Stdout, cmd.Stderr = r, stderr
		runErr = cmd.Run()
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		resp, err := r.finish(runErr, cmd.ProcessState, stderr.String())
		resumeFailed = r.resumeFailed
		return resp, err
	})
	if resumeFailed {
		return code, errors.Join(runErr, ErrSessionResumeInvalid)
	}
	return code, runErr
}

// run is the state of one agent run: it is the agent's stdout, passing
// every byte on and parsing each complete line.
type run struct {
	ctx    context.Context
	span   trace.Span
	rec    *instrument.Recorder
	format Format
	out    io.Writer
	line   []byte
	stdout bytes.Buffer // for FormatPlain and auto before the first line

	codex    *codexParser
	session  string
	model    string
	response *pendingText // the last assistant text, not yet recorded
	result   *Event
	errs     []string
	tools    map[string]*openTool
	agents   map[string]string // sub-agent name by the id of its Task tool use
	// resumeFailed says the agent rejected the session it was to resume.
	resumeFailed bool
	wg           sync.WaitGroup
}

// openTool is a tool span waiting for its result.
type openTool struct {
	ctx    context.Context // the span's, for the tool spans of its sub-agent
	result chan Event      // closed when the agent ended first
	done   chan struct{}   // closed when the span ended
}

type pendingText struct {
	text string
	at   time.Time
}

func newRun(ctx context.Context, rec *instrument.Recorder, format Format, out io.Writer) *run {
	if out == nil {
		out = io.Discard
	}
	return &run{ctx: ctx, span: trace.SpanFromContext(ctx), rec: rec, format: format, out: out,
		codex: newCodexParser(), tools: map[string]*openTool{}, agents: map[string]string{}}
}

// Write passes p on, then parses the lines it completes. exec.Cmd calls it
// from one goroutine.
func (r *run) Write(p []byte) (int, error) {
	n, err := r.out.Write(p)
	if r.format == FormatPlain {
		r.stdout.Write(p[:n])
		return n, err
	}
	r.line = append(r.line, p[:n]...)
	for {
		i := bytes.IndexByte(r.line, '\n')
		if i < 0 {
			break
		}
		r.parse(r.line[:i])
		r.line = r.line[i+1:]
	}
	return n, err
}

func (r *run) parse(line []byte) {
	if r.format == FormatAuto {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		r.format = sniff(line)
		r.span.SetAttributes(attribute.String(schema.KeyProviderName, provider(r.format)))
	}
	if r.format == FormatPlain {
		r.stdout.Write(line)
		r.stdout.WriteByte('\n')
		return
	}
	var events []Event
	switch r.format {
	case FormatClaude:
		events = parseClaude(line)
	case FormatCodex:
		events = r.codex.line(line)
	}
	for _, e := range events {
		r.handle(e)
	}
}

func (r *run) handle(e Event) {
	if e.SessionID != "" && e.SessionID != r.session {
		r.session = e.SessionID
		r.span.SetAttributes(attribute.String(schema.KeySessionID, e.SessionID))
	}
	if e.Model != "" && e.Model != r.model {
		r.model = e.Model
		r.span.SetAttributes(attribute.String(schema.KeyResponseModel, e.Model))
	}
	if e.ParentToolUseID != "" {
		e.Agent = r.agents[e.ParentToolUseID]
	}
	switch e.Kind {
	case KindSession:
	case KindResponse:
		if e.ParentToolUseID != "" {
			// A sub-agent's text is never the run's answer.
			r.addTurn(e, time.Now())
			return
		}
		r.flushResponse()
		r.response = &pendingText{text: e.Content, at: time.Now()}
	case KindToolCall:
		r.flushResponse()
		if name := subagentName(e); name != "" {
			r.agents[e.CallID] = name
		}
		r.startTool(e)
	case KindToolResult, KindToolResultError:
		if t, ok := r.tools[e.CallID]; ok {
			delete(r.tools, e.CallID)
			t.result <- e
			<-t.done // the span ends before the next event is read
		}
	case KindResult:
		if r.result == nil {
			r.result = &Event{}
		}
		r.result.Content = e.Content
		r.result.IsError = e.IsError
		r.result.CostUSD = e.CostUSD
		r.result.DurationMS = e.DurationMS
		if u := e.Usage; u != nil {
			if r.result.Usage == nil {
				r.result.Usage = &instrument.Usage{}
			}
			sum := r.result.Usage
			sum.InputTokens += u.InputTokens
			sum.OutputTokens += u.OutputTokens
			sum.CacheReadTokens += u.CacheReadTokens
			sum.CacheWriteTokens += u.CacheWriteTokens
			sum.ReasoningTokens += u.ReasoningTokens
		}
	case KindError:
		r.errs = append(r.errs, e.Content)
		r.addTurn(e, time.Now())
	default:
		r.flushResponse()
		r.addTurn(e, time.Now())
	}
}

// flushResponse records the pending assistant text: it is not the last.
func (r *run) flushResponse() {
	if r.response != nil {
		r.addTurn(Event{Kind: KindResponse, Content: r.response.text}, r.response.at)
		r.response = nil
	}
}

func (r *run) addTurn(e Event, at time.Time) {
	attrs := append([]attribute.KeyValue{attribute.String(schema.KeyRole, e.Kind)}, r.rec.ContentAttributes(e.Content)...)
	if e.Code != "" {
		attrs = append(attrs, attribute.String(schema.KeyCode, e.Code))
	}
	if r.session != "" {
		attrs = append(attrs, attribute.String(schema.KeySessionID, r.session))
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String(schema.KeyAgent, e.Agent))
	}
	r.span.AddEvent(schema.EventTurn, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
}

// startTool records a tool use as an execute_tool span, child of the run,
// that ends when its result arrives (or the run ends).
func (r *run) startTool(e Event) {
	if old, ok := r.tools[e.CallID]; ok {
		close(old.result)
		<-old.done
	}
	t := &openTool{result: make(chan Event, 1), done: make(chan struct{})}
	ch := t.result
	r.tools[e.CallID] = t
	started := make(chan struct{})
	session := r.session
	// A sub-agent's tool uses nest under its Task's span, named after it.
	parent := r.ctx
	if task, ok := r.tools[e.ParentToolUseID]; ok && e.ParentToolUseID != "" {
		parent = task.ctx
	}
	if e.Agent != "" {
		parent = instrument.WithAgent(parent, e.Agent)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(t.done)
		_, _ = r.rec.Tool(parent, instrument.ToolCall{Name: e.ToolName, CallID: e.CallID, Arguments: e.Content},
			func(ctx context.Context) (string, error) {
				if session != "" {
					trace.SpanFromContext(ctx).SetAttributes(attribute.String(schema.KeySessionID, session))
				}
				t.ctx = ctx
				close(started)
				res, ok := <-ch
				switch {
				case !ok:
					return "", errors.New("no tool result: the agent ended first")
				case res.Kind == KindToolResultError:
					return res.Content, errToolFailed
				}
				return res.Content, nil
			})
	}()
	<-started // keep spans in the order the agent used the tools
}

// errToolFailed is the error of a tool use whose result the agent marked
// as an error; the result itself is recorded as the tool's output.
var errToolFailed = errors.New("the tool reported an error")

// finish ends the run: it closes tools left without a result, records the
// warnings and returns the run's response, or its error.
func (r *run) finish(runErr error, state *os.ProcessState, stderr string) (instrument.Response, error) {
	rest := r.line
	r.line = nil
	if r.format == FormatAuto && len(bytes.TrimSpace(rest)) > 0 {
		r.format = sniff(rest)
	}
	if r.format == FormatPlain {
		r.stdout.Write(rest)
	} else if len(bytes.TrimSpace(rest)) > 0 {
		r.parse(rest)
	}
	for id, t := range r.tools {
		close(t.result)
		<-t.done
		delete(r.tools, id)
	}
	r.wg.Wait()

	failed := runErr != nil || (r.result != nil && r.result.IsError)
	if failed && resumeInvalid(r.format, stderr+"\n"+strings.Join(r.errs, "\n")+"\n"+resultText(r.result)) {
		r.resumeFailed = true
		r.flushResponse()
		r.addTurn(Event{Kind: KindWarning, Code: CodeSessionResumeInvalid, Content: lastLine(stderr, r.errs, r.result)}, time.Now())
	}
	resp := instrument.Response{Model: r.model, SessionID: r.session}
	switch {
	case r.format == FormatPlain || r.format == FormatAuto:
		resp.Content = r.stdout.String()
	case r.result != nil && r.result.Content != "":
		resp.Content = r.result.Content
	case r.response != nil:
		resp.Content = r.response.text
	}
	if r.response != nil && (failed || r.response.text != resp.Content) {
		r.flushResponse()
	}
	if res := r.result; res != nil {
		resp.Usage, resp.CostUSD = res.Usage, res.CostUSD
		if res.DurationMS > 0 {
			r.span.SetAttributes(attribute.Int64("convtrace.agent.duration_ms", res.DurationMS))
		}
	}
	if !failed {
		return resp, nil
	}
	msg := "agent reported an error" // it exited 0 with an error result
	switch {
	case runErr != nil && state != nil:
		msg = state.String() // "exit status 3", "signal: killed"
	case runErr != nil:
		msg = runErr.Error()
	}
	detail := strings.TrimSpace(stderr)
	if detail == "" {
		detail = strings.TrimSpace(strings.Join(r.errs, "\n"))
	}
	if detail == "" && r.result != nil {
		detail = r.result.Content
	}
	if detail != "" {
		msg += ": " + detail
	}
	return resp, errors.New(msg)
}

func resultText(e *Event) string {
	if e == nil {
		return ""
	}
	return e.Content
}

func lastLine(stderr string, errs []string, res *Event) string {
	for _, s := range append([]string{stderr, resultText(res)}, errs...) {
		if s = strings.TrimSpace(s); s != "" {
			lines := strings.Split(s, "\n")
			return lines[len(lines)-1]
		}
	}
	return ""
}

// sniff guesses the format from the first line of stdout.
func sniff(line []byte) Format {
	var l struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &l) != nil {
		return FormatPlain
	}
	switch {
	case l.Type == "system" || l.Type == "assistant" || l.Type == "user" || l.Type == "result" || l.Type == "stream_event":
		return FormatClaude
	case strings.HasPrefix(l.Type, "thread.") || strings.HasPrefix(l.Type, "turn.") ||
		strings.HasPrefix(l.Type, "item.") || l.Type == "error":
		return FormatCodex
	}
	return FormatPlain
}

// formatFromArgs knows the agents by their output flags; anything else is
// decided by its first line.
func formatFromArgs(args []string) Format {
	if len(args) == 0 {
		return FormatAuto
	}
	var exec, jsonFlag, streamJSON bool
	for i, a := range args[1:] {
		switch {
		case a == "exec":
			exec = true
		case a == "--json" || a == "--experimental-json":
			jsonFlag = true
		case a == "--output-format=stream-json",
			a == "--output-format" && i+2 < len(args) && args[i+2] == "stream-json":
			streamJSON = true
		}
	}
	switch {
	case streamJSON:
		return FormatClaude
	case exec && jsonFlag:
		return FormatCodex
	}
	return FormatAuto
}

func provider(f Format) string {
	switch f {
	case FormatClaude:
		return "anthropic"
	case FormatCodex:
		return "openai"
	}
	return ""
}

// valueFlags are the agents' flags that take a value, so that value is not
// mistaken for the prompt.
var valueFlags = map[string]bool{
	// Claude Code
	"--output-format": true, "--input-format": true, "--model": true, "--resume": true, "-r": true,
	"--session-id": true, "--allowedTools": true, "--allowed-tools": true, "--disallowedTools": true,
	"--disallowed-tools": true, "--permission-mode": true, "--append-system-prompt": true,
	"--system-prompt": true, "--max-turns": true, "--mcp-config": true, "--settings": true,
	"--add-dir": true, "--fallback-model": true, "--agents": true, "--permission-prompt-tool": true,
	// Codex
	"-m": true, "-c": true, "--config": true, "-s": true, "--sandbox": true, "-C": true, "--cd": true,
	"--profile": true, "-i": true, "--image": true, "-o": true, "--output-last-message": true,
	"--output-schema": true, "--color": true, "-a": true, "--ask-for-approval": true,
}

// promptFromArgs returns the agent's prompt from its arguments: the last
// argument that is neither a flag, a flag's value nor a subcommand. For
// other commands it is the arguments themselves.
func promptFromArgs(args []string, f Format) string {
	if len(args) < 2 {
		return ""
	}
	if f != FormatClaude && f != FormatCodex && !isAgent(args[0]) {
		return strings.Join(args[1:], " ")
	}
	var last string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				last = args[len(args)-1]
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			if valueFlags[a] && !strings.Contains(a, "=") {
				i++
			}
		case a == "exec" || a == "resume":
			if a == "resume" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && i+2 < len(args) {
				i++ // the session id
			}
		default:
			last = a
		}
	}
	if last == "-" {
		return ""
	}
	return last
}

func isAgent(path string) bool {
	name := filepath.Base(path)
	return strings.Contains(name, "claude") || strings.Contains(name, "codex")
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
