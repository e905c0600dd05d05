package cliagent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// run is the state of one agent run: it is the agent's stdout, passing
// every byte on and parsing each complete line.
type run struct {
	ctx    context.Context
	call   *instrument.ActiveCall
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
	// resumed is the session the run was told to resume, "" for none;
	// resumeFailed says the agent rejected it.
	resumed      string
	resumeFailed bool

	// The provider calls of a Claude Code run, by message id, open ones
	// in order of their start (calls.go); lastLine is when the line
	// before the one being read came.
	calls      map[string]*providerCall
	order      []string
	ncalls     int
	lastText   string // the main agent's last text
	outKnown   int    // output tokens the calls told
	outUnknown int    // calls that did not tell theirs
	lastLine   time.Time
	// hidePartials: the run asked for stream events the caller did not
	// (--include-partial-messages); their lines are read, not passed on.
	hidePartials bool
}

// openTool is a tool span waiting for its result.
type openTool struct {
	ctx  context.Context // the span's, for the tool spans of its sub-agent
	tool *instrument.ActiveTool
}

type pendingText struct {
	text string
	at   time.Time
}

func newRun(ctx context.Context, rec *instrument.Recorder, call *instrument.ActiveCall, format Format, out io.Writer) *run {
	if out == nil {
		out = io.Discard
	}
	return &run{ctx: ctx, call: call, rec: rec, format: format, out: out,
		codex: newCodexParser(), tools: map[string]*openTool{}, agents: map[string]string{},
		calls: map[string]*providerCall{}, lastLine: time.Now()}
}

// Write passes p on, then parses the lines it completes. exec.Cmd calls it
// from one goroutine.
func (r *run) Write(p []byte) (int, error) {
	n, err := len(p), error(nil)
	if !r.hidePartials {
		n, err = r.out.Write(p)
	}
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
		if r.hidePartials && !isStreamEvent(r.line[:i]) {
			if _, werr := r.out.Write(r.line[:i+1]); werr != nil && err == nil {
				err = werr
			}
		}
		r.parse(r.line[:i])
		r.line = r.line[i+1:]
	}
	return n, err
}

// isStreamEvent reports whether a line of Claude Code's stream-json is a
// stream event.
func isStreamEvent(line []byte) bool {
	var l struct {
		Type string `json:"type"`
	}
	return bytes.Contains(line, []byte(`"stream_event"`)) && json.Unmarshal(line, &l) == nil && l.Type == "stream_event"
}

func (r *run) parse(line []byte) {
	if r.format == FormatAuto {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		r.format = sniff(line)
		r.call.Span().SetAttributes(attribute.String(schema.KeyProviderName, provider(r.format)))
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
	r.lastLine = time.Now()
}

func (r *run) handle(e Event) {
	if e.SessionID != "" && e.SessionID != r.session {
		r.session = e.SessionID
		r.call.Span().SetAttributes(attribute.String(schema.KeySessionID, e.SessionID))
	}
	if e.Model != "" && e.Model != r.model {
		r.model = e.Model
		r.call.Span().SetAttributes(attribute.String(schema.KeyResponseModel, e.Model))
	}
	if e.ParentToolUseID != "" {
		e.Agent = r.agents[e.ParentToolUseID]
	}
	if e.Kind != KindSession {
		// An event of another message, or of none, ends the calls
		// before it (when no message_stop did).
		r.endCalls(e.MessageID)
	}
	if r.onCall(e) {
		return
	}
	switch e.Kind {
	case KindSession:
		if r.format == FormatCodex && r.codex.resumes {
			r.codex.baseline(e.SessionID)
			if r.codex.base == nil {
				r.addTurn(Event{Kind: KindWarning, Code: CodeUsageCumulative, Content: "Codex reports the resumed session's usage since it began, and its session file was not found: this run's usage includes the session's earlier turns"}, time.Now())
			}
		}
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
			if e.Kind == KindToolResultError {
				t.tool.End(e.Content, errToolFailed)
			} else {
				t.tool.End(e.Content, nil)
			}
		}
	case KindResult:
		if r.result == nil {
			r.result = &Event{}
		}
		r.result.Content = e.Content
		r.result.IsError = e.IsError
		r.result.CostUSD = e.CostUSD
		r.result.DurationMS = e.DurationMS
		if u := e.Usage; u != nil && r.format == FormatCodex {
			// The session's total so far: this run's is what it adds
			// to the total before it.
			own := r.codex.ownUsage(*u)
			r.result.Usage = &own
		} else if u != nil {
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
		// Stored once: as the run's error if it fails, else as a
		// warning (see finish).
		if e.Content != "" && !slices.Contains(r.errs, e.Content) {
			r.errs = append(r.errs, e.Content)
		}
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
	var attrs []attribute.KeyValue
	if e.Code != "" {
		attrs = append(attrs, attribute.String(schema.KeyCode, e.Code))
	}
	if e.Rejected != "" {
		attrs = append(attrs, attribute.String(schema.KeyRejectedSession, e.Rejected))
	}
	if r.session != "" {
		attrs = append(attrs, attribute.String(schema.KeySessionID, r.session))
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String(schema.KeyAgent, e.Agent))
	}
	r.call.AddTurn(at, e.Kind, e.Content, attrs...)
}

// startTool records a tool use as an execute_tool span, child of the run,
// that ends when its result arrives (or the run ends).
func (r *run) startTool(e Event) {
	if old, ok := r.tools[e.CallID]; ok {
		old.tool.End("", errNoResult)
	}
	// A sub-agent's tool uses nest under its Task's span, named after it.
	parent := r.ctx
	if task, ok := r.tools[e.ParentToolUseID]; ok && e.ParentToolUseID != "" {
		parent = task.ctx
	}
	if e.Agent != "" {
		parent = instrument.WithAgent(parent, e.Agent)
	}
	ctx, tool := r.rec.StartTool(parent, instrument.ToolCall{Name: e.ToolName, CallID: e.CallID, Arguments: e.Content})
	if r.session != "" {
		tool.Span().SetAttributes(attribute.String(schema.KeySessionID, r.session))
	}
	r.tools[e.CallID] = &openTool{ctx: ctx, tool: tool}
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
