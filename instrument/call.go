package instrument

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

	// ParentTurnID, when set, replaces Turn.ParentTurnID: for a turn whose
	// parent is known only from its answer, such as an adjudicator's choice.
	ParentTurnID string

	// TurnID is set by Call: the id of the response turn (or of the error
	// turn), for threading later turns to this one.
	TurnID string
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

// Call runs fn, the provider call described by turn, inside a span. It
// returns what fn returns, unchanged: recording never fails or delays the
// call beyond the span's own bookkeeping. A panic in fn is recorded as an
// error and re-raised.
func (r *Recorder) Call(ctx context.Context, turn Turn, fn func(context.Context) (Response, error)) (Response, error) {
	op := turn.Operation
	if op == "" {
		op = schema.OperationChat
	}
	name := op
	if turn.Model != "" {
		name += " " + turn.Model
	}
	attrs := append(r.scopeAttrs(ctx, turn, 5),
		attribute.String(schema.KeyOperationName, op),
		attribute.String(schema.KeyProviderName, turn.Provider),
		attribute.String(schema.KeyRequestModel, turn.Model),
	)
	if turn.ParentTurnID != "" {
		attrs = append(attrs, attribute.String(schema.KeyParentTurnID, turn.ParentTurnID))
	}
	if turn.SessionID != "" {
		attrs = append(attrs, attribute.String(schema.KeySessionID, turn.SessionID))
	}
	if turn.Internal {
		attrs = append(attrs, attribute.Bool(schema.KeyInternal, true))
	}
	ctx, span := r.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	span.AddEvent(schema.EventPrompt, trace.WithAttributes(r.content(turn.Prompt)...))

	var resp Response
	var err error
	defer endOnPanic(span)
	resp, err = fn(ctx)
	resp.TurnID = schema.ResponseTurnID(span.SpanContext().SpanID().String(), err != nil)
	usage := usageAttrs(resp)
	if err != nil {
		// What a failed call reported (the input it was charged for) is
		// kept on its error turn.
		span.SetAttributes(usage...)
		endFailed(span, err)
		return resp, err
	}
	end := r.content(resp.Content)
	if resp.Model != "" {
		span.SetAttributes(attribute.String(schema.KeyResponseModel, resp.Model))
	}
	if resp.ParentTurnID != "" {
		span.SetAttributes(attribute.String(schema.KeyParentTurnID, resp.ParentTurnID))
	}
	if resp.SessionID != "" && resp.SessionID != turn.SessionID {
		span.SetAttributes(attribute.String(schema.KeySessionID, resp.SessionID))
	}
	span.SetAttributes(usage...)
	end = append(end, usage...)
	span.AddEvent(schema.EventResponse, trace.WithAttributes(end...))
	span.End()
	return resp, nil
}

// Tool runs fn, the execution of one tool call, inside an "execute_tool
// {name}" span: the arguments become the tool_call turn and fn's result the
// tool_result turn. When fn fails, the result it returns, if any, is the
// failed tool's output and the error's message says only that it failed.
// Like Call, it returns fn's result unchanged.
func (r *Recorder) Tool(ctx context.Context, call ToolCall, fn func(context.Context) (string, error)) (string, error) {
	attrs := append(r.scopeAttrs(ctx, Turn{}, 3),
		attribute.String(schema.KeyOperationName, schema.OperationExecuteTool),
		attribute.String(schema.KeyToolName, call.Name),
		attribute.String(schema.KeyToolCallID, call.CallID),
	)
	ctx, span := r.tracer.Start(ctx, schema.OperationExecuteTool+" "+call.Name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.AddEvent(schema.EventPrompt, trace.WithAttributes(r.content(call.Arguments)...))
	defer endOnPanic(span)
	result, err := fn(ctx)
	if err != nil {
		if result != "" {
			// A failed tool's output is content: it obeys the capture
			// settings, unlike the error message.
			span.AddEvent(schema.EventResponse, trace.WithAttributes(r.content(result)...))
		}
		endFailed(span, err)
		return result, err
	}
	span.AddEvent(schema.EventResponse, trace.WithAttributes(r.content(result)...))
	span.End()
	return result, nil
}

// scopeAttrs merges the context's scope with the turn's overrides, with
// room for extra attributes more.
func (r *Recorder) scopeAttrs(ctx context.Context, turn Turn, extra int) []attribute.KeyValue {
	s := scopeFrom(ctx)
	s.thread = cmp.Or(turn.Thread, s.thread)
	s.phase = cmp.Or(turn.Phase, s.phase)
	s.speaker = cmp.Or(turn.Speaker, s.speaker)
	s.agent = cmp.Or(turn.Agent, s.agent)
	return appendScope(make([]attribute.KeyValue, 0, 5+extra), s)
}

// ContentAttributes returns the attributes that carry content s on an event
// the way the prompt and response events carry theirs, honouring
// WithoutContent and WithContentLimit: for recorders that add turns of
// their own, such as a CLI agent's.
func (r *Recorder) ContentAttributes(s string) []attribute.KeyValue { return r.content(s) }

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

// endOnPanic, deferred right after a span starts, ends the span failed
// when the code it measures panics and re-raises the same value, so a
// crash still shows in the trace.
func endOnPanic(span trace.Span) {
	if p := recover(); p != nil {
		endFailed(span, fmt.Errorf("panic: %v", p))
		panic(p)
	}
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
