package instrument

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/schema"
)

// ScopeName is the instrumentation scope of the spans this package starts.
const ScopeName = "github.com/convtrace/convtrace/instrument"

// DefaultContentLimit is the size above which prompt and response content is
// cut: 5 MB.
const DefaultContentLimit = 5 << 20

// Turn describes one provider call before it is made.
type Turn struct {
	Operation    string // gen_ai.operation.name; "chat" when empty
	Provider     string // gen_ai.provider.name, e.g. "openai", "anthropic"
	Model        string // the requested model
	Prompt       string // what is sent: text, or the messages as JSON
	ParentTurnID string // the turn this one answers, e.g. the plan a critique critiques
	SessionID    string // the provider's session id (Claude session, Codex thread)

	// Thread, Phase, Speaker and Agent override the context's values when
	// set; the round always comes from the context (WithRound).
	Thread, Phase, Speaker, Agent string

	// Internal keeps the call in the audit trail (stored, searchable) but
	// out of the thread's recent context and, unless asked for, out of its
	// page: for a pipeline's own bookkeeping calls (convtrace.internal).
	Internal bool

	// Continues says the call's input is already recorded (the agent
	// run's prompt it serves, the tool results before it): it stores no
	// prompt turn, only its answer.
	Continues bool

	// Start is when the call began, for a call recorded after the fact;
	// zero is now.
	Start time.Time
}

// Usage is the token counts a provider reports for one call. InputTokens
// counts every input token, those read from and written to the prompt cache
// included, as the OTel GenAI conventions and OpenAI do; an InputTokens
// smaller than the cache tokens is taken as Anthropic's count, which leaves
// them out, and the cache is added (schema.InputTokens).
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// Response is what a provider call returned.
type Response struct {
	Content   string
	Model     string   // the model that answered, when the provider says
	SessionID string   // the provider's session id, when learned from the response
	Usage     *Usage   // nil when the provider reports no usage
	CostUSD   *float64 // nil when the cost is not known

	// TimeToFirstToken, when positive, is how long a streamed call took to
	// send its first token, for a caller that measured it (see also
	// ActiveCall.FirstToken).
	TimeToFirstToken time.Duration

	// ParentTurnID, when set, replaces Turn.ParentTurnID: for a turn whose
	// parent is known only from its answer, such as an adjudicator's choice.
	ParentTurnID string

	// TurnID is set by Call: the id of the response turn (or of the error
	// turn), for threading later turns to this one.
	TurnID string

	// AnswerInCalls says the answer is already recorded as the last of
	// the calls the run made (see Turn.Continues): an agent run whose
	// provider calls are their own spans stores no response turn of its
	// own; its prompt turn carries its duration.
	AnswerInCalls bool
}

// ToolCall describes one tool execution.
type ToolCall struct {
	Name      string
	CallID    string
	Arguments string // usually JSON
}

// Recorder records provider calls and tool executions as spans.
type Recorder struct {
	tracer  trace.Tracer
	capture bool
	limit   int
}

// Option configures a Recorder.
type Option interface{ apply(*Recorder) }

type optionFunc func(*Recorder)

func (f optionFunc) apply(r *Recorder) { f(r) }

// WithTracerProvider records spans with tp instead of the global provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(r *Recorder) { r.tracer = tp.Tracer(ScopeName) })
}

// WithoutContent records calls without their prompt and response content,
// keeping only sizes, tokens and metadata.
func WithoutContent() Option {
	return optionFunc(func(r *Recorder) { r.capture = false })
}

// WithContentLimit cuts content above n bytes (default 5 MB) and marks it
// truncated.
func WithContentLimit(n int) Option {
	return optionFunc(func(r *Recorder) { r.limit = n })
}

// NewRecorder returns a Recorder that uses the global tracer provider unless
// told otherwise.
func NewRecorder(opts ...Option) *Recorder {
	r := &Recorder{tracer: otel.Tracer(ScopeName), capture: true, limit: DefaultContentLimit}
	for _, o := range opts {
		o.apply(r)
	}
	return r
}

var defaultRecorder = NewRecorder()

// Call records fn as one provider call with the global tracer provider.
// See Recorder.Call.
func Call(ctx context.Context, turn Turn, fn func(context.Context) (Response, error)) (Response, error) {
	return defaultRecorder.Call(ctx, turn, fn)
}

// Tool records fn as one tool execution with the global tracer provider.
// See Recorder.Tool.
func Tool(ctx context.Context, call ToolCall, fn func(context.Context) (string, error)) (string, error) {
	return defaultRecorder.Tool(ctx, call, fn)
}

// Call runs fn, the provider call described by turn, inside a span: it is
// Start, fn and End. It returns what fn returns, unchanged (with the
// response's TurnID set): recording never fails or delays the call beyond
// the span's own bookkeeping. A panic in fn is recorded as an error and
// re-raised.
func (r *Recorder) Call(ctx context.Context, turn Turn, fn func(context.Context) (Response, error)) (Response, error) {
	ctx, c := r.Start(ctx, turn)
	defer c.EndOnPanic()
	resp, err := fn(ctx)
	return c.End(resp, err), err
}

// Tool runs fn, the execution of one tool call, inside an "execute_tool
// {name}" span: it is StartTool, fn and End. The arguments become the
// tool_call turn and fn's result the tool_result turn. Like Call, it
// returns fn's result unchanged.
func (r *Recorder) Tool(ctx context.Context, call ToolCall, fn func(context.Context) (string, error)) (string, error) {
	ctx, t := r.StartTool(ctx, call)
	defer t.EndOnPanic()
	result, err := fn(ctx)
	t.End(result, err)
	return result, err
}

// withTurnScope returns ctx with the turn's overrides of its scope, so
// that the call's own spans (its tools, the HTTP requests it makes) carry
// them too, and the attributes of that scope, with room for extra more.
func withTurnScope(ctx context.Context, turn Turn, extra int) (context.Context, []attribute.KeyValue) {
	s := scopeFrom(ctx)
	if turn.Thread != "" && turn.Thread != s.thread || turn.Phase != "" && turn.Phase != s.phase ||
		turn.Speaker != "" && turn.Speaker != s.speaker || turn.Agent != "" && turn.Agent != s.agent {
		s.thread = cmp.Or(turn.Thread, s.thread)
		s.phase = cmp.Or(turn.Phase, s.phase)
		s.speaker = cmp.Or(turn.Speaker, s.speaker)
		s.agent = cmp.Or(turn.Agent, s.agent)
		ctx = context.WithValue(ctx, scopeKey{}, s)
	}
	return ctx, appendScope(make([]attribute.KeyValue, 0, 5+len(s.threadAttrs)+extra), s)
}

// content returns the attributes of a prompt or response event: the content
// (unless capture is off), cut to the limit at a rune boundary, with its
// original size and whether it was cut.
func (r *Recorder) content(s string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.Int(schema.KeyContentBytes, len(s))}
	if !r.capture {
		return attrs
	}
	if r.limit > 0 && len(s) > r.limit {
		cut := r.limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return append(attrs, attribute.String(schema.KeyContent, s[:cut]), attribute.Bool(schema.KeyContentTruncated, true))
	}
	return append(attrs, attribute.String(schema.KeyContent, s))
}

// usageAttrs are the usage and cost a call's response reports.
func usageAttrs(resp Response) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if u := resp.Usage; u != nil {
		attrs = append(attrs,
			attribute.Int(schema.KeyInputTokens, u.InputTokens),
			attribute.Int(schema.KeyOutputTokens, u.OutputTokens),
			attribute.Int(schema.KeyCacheReadTokens, u.CacheReadTokens),
			attribute.Int(schema.KeyCacheWriteTokens, u.CacheWriteTokens),
			attribute.Int(schema.KeyReasoningTokens, u.ReasoningTokens),
		)
	}
	if resp.CostUSD != nil {
		attrs = append(attrs, attribute.Float64(schema.KeyCostUSD, *resp.CostUSD))
	}
	return attrs
}

// endOnPanic, deferred right after a span starts, ends the span failed
// when the code it measures panics and re-raises the same value, so a
// crash still shows in the trace.
func endOnPanic(span trace.Span) {
	if p := recover(); p != nil {
		panicked(span, p)
	}
}

// panicked ends span failed with the value p a panic raised, then raises
// it again.
func panicked(span trace.Span, p any) {
	endFailed(span, fmt.Errorf("panic: %v", p))
	panic(p)
}

func endFailed(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(attribute.String(schema.KeyErrorType, errorType(err)))
	span.End()
}

// errorType names an error's type for error.type, unwrapping fmt.Errorf
// wrappers so the cause's type shows.
func errorType(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}
