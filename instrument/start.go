package instrument

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/schema"
)

// ActiveCall is a provider call that Start began and End has not ended:
// for a call that does not end when a function returns, such as one whose
// response body the client reads later, or a CLI agent whose events stream
// in while it runs.
type ActiveCall struct {
	r     *Recorder
	span  trace.Span
	turn  Turn
	start time.Time
	first atomic.Bool // the time to first token is recorded
}

// ActiveTool is a tool execution that StartTool began and End has not
// ended.
type ActiveTool struct {
	r    *Recorder
	span trace.Span
}

// Start begins the provider call described by turn: its span starts and
// its prompt is recorded. The context returned carries the span and the
// turn's thread, phase, speaker and agent, so the spans the call starts
// (its tools, its HTTP requests) belong to it. End the call exactly once.
func (r *Recorder) Start(ctx context.Context, turn Turn) (context.Context, *ActiveCall) {
	op := turn.Operation
	if op == "" {
		op = schema.OperationChat
	}
	name := op
	if turn.Model != "" {
		name += " " + turn.Model
	}
	ctx, attrs := withTurnScope(ctx, turn, 6)
	attrs = append(attrs,
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
	start := turn.Start
	if start.IsZero() {
		start = time.Now()
	}
	ctx, span := r.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	prompt := r.content(turn.Prompt)
	if turn.Continues {
		prompt = []attribute.KeyValue{attribute.Int(schema.KeyContentBytes, 0), attribute.Bool(schema.KeyRecordedElsewhere, true)}
	}
	span.AddEvent(schema.EventPrompt, trace.WithTimestamp(start), trace.WithAttributes(prompt...))
	return ctx, &ActiveCall{r: r, span: span, turn: turn, start: start}
}

// FirstToken records that the first token of a streamed answer arrived
// at at: the call's time to first token (gen_ai.response.time_to_first_chunk)
// is at less the call's start. Only the first report counts; a call never
// told has no time to first token. It is safe to call from any goroutine.
func (c *ActiveCall) FirstToken(at time.Time) {
	c.recordTTFT(at.Sub(c.start))
}

func (c *ActiveCall) recordTTFT(d time.Duration) {
	if d > 0 && c.first.CompareAndSwap(false, true) {
		c.span.SetAttributes(attribute.Float64(schema.KeyTimeToFirstChunk, d.Seconds()))
	}
}

// Span is the call's span, for attributes the Recorder does not write.
func (c *ActiveCall) Span() trace.Span { return c.span }

// AddTurn records a turn of the call besides its prompt and response, such
// as a CLI agent's intermediate answer, reasoning or warning: role is its
// role (schema.Role*), content is kept as the prompt's is (WithoutContent,
// WithContentLimit) and attrs are more attributes of the turn.
func (c *ActiveCall) AddTurn(at time.Time, role, content string, attrs ...attribute.KeyValue) {
	all := append([]attribute.KeyValue{attribute.String(schema.KeyRole, role)}, c.r.content(content)...)
	c.span.AddEvent(schema.EventTurn, trace.WithTimestamp(at), trace.WithAttributes(append(all, attrs...)...))
}

// End ends the call with what it returned: the response and its usage, or
// the error and the usage a failed call reported. It returns resp with
// TurnID set to the id of its response (or error) turn.
func (c *ActiveCall) End(resp Response, err error) Response {
	span := c.span
	resp.TurnID = schema.ResponseTurnID(span.SpanContext().SpanID().String(), err != nil)
	c.recordTTFT(resp.TimeToFirstToken)
	usage := usageAttrs(resp)
	if err != nil {
		// What a failed call reported (the input it was charged for) is
		// kept on its error turn.
		span.SetAttributes(usage...)
		endFailed(span, err)
		return resp
	}
	end := c.r.content(resp.Content)
	if resp.AnswerInCalls {
		end = []attribute.KeyValue{attribute.Int(schema.KeyContentBytes, 0), attribute.Bool(schema.KeyRecordedElsewhere, true)}
	}
	if resp.Model != "" {
		span.SetAttributes(attribute.String(schema.KeyResponseModel, resp.Model))
	}
	if resp.ParentTurnID != "" {
		span.SetAttributes(attribute.String(schema.KeyParentTurnID, resp.ParentTurnID))
	}
	if resp.SessionID != "" && resp.SessionID != c.turn.SessionID {
		span.SetAttributes(attribute.String(schema.KeySessionID, resp.SessionID))
	}
	span.SetAttributes(usage...)
	end = append(end, usage...)
	span.AddEvent(schema.EventResponse, trace.WithAttributes(end...))
	span.End()
	return resp
}

// EndOnPanic, deferred right after Start, ends the call failed when the
// code making it panics and re-raises the same value, so a crash still
// shows in the trace.
func (c *ActiveCall) EndOnPanic() {
	if p := recover(); p != nil {
		panicked(c.span, p)
	}
}

// StartTool begins the execution of one tool call: an "execute_tool
// {name}" span whose arguments are the tool_call turn. The context
// returned carries the span. End the tool exactly once.
func (r *Recorder) StartTool(ctx context.Context, call ToolCall) (context.Context, *ActiveTool) {
	_, attrs := withTurnScope(ctx, Turn{}, 3)
	attrs = append(attrs,
		attribute.String(schema.KeyOperationName, schema.OperationExecuteTool),
		attribute.String(schema.KeyToolName, call.Name),
		attribute.String(schema.KeyToolCallID, call.CallID),
	)
	ctx, span := r.tracer.Start(ctx, schema.OperationExecuteTool+" "+call.Name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.AddEvent(schema.EventPrompt, trace.WithAttributes(r.content(call.Arguments)...))
	return ctx, &ActiveTool{r: r, span: span}
}

// Span is the tool's span, for attributes the Recorder does not write.
func (t *ActiveTool) Span() trace.Span { return t.span }

// End ends the tool with its result, the tool_result turn. When err is not
// nil the tool failed: a result, if any, is the failed tool's output, and
// the error's message says only that it failed.
func (t *ActiveTool) End(result string, err error) {
	if err != nil {
		if result != "" {
			// A failed tool's output is content: it obeys the capture
			// settings, unlike the error message.
			t.span.AddEvent(schema.EventResponse, trace.WithAttributes(t.r.content(result)...))
		}
		endFailed(t.span, err)
		return
	}
	t.span.AddEvent(schema.EventResponse, trace.WithAttributes(t.r.content(result)...))
	t.span.End()
}

// EndOnPanic, deferred right after StartTool, ends the tool failed when
// the code running it panics and re-raises the same value.
func (t *ActiveTool) EndOnPanic() {
	if p := recover(); p != nil {
		panicked(t.span, p)
	}
}
