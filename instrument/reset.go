package instrument

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/schema"
)

// ErrNoThread means a context names no thread (WithThread) where one is
// needed.
var ErrNoThread = errors.New("instrument: the context names no thread (WithThread)")

// ResetContext records that the context's thread starts its recent context
// anew: from now on store.RecentContext (and the viewer's
// GET /api/threads/ID/context) reads only what is said after it, while
// every earlier turn stays stored and shown. It is a span of its own with a
// convtrace.context_reset event, which the collector stores as a
// context_reset turn of the thread: instrument reaches no storage, so the
// reset travels the way every call does, in-process or over OTLP, and is
// stored once its span is exported. It returns ErrNoThread when ctx names
// no thread.
func (r *Recorder) ResetContext(ctx context.Context) error {
	if scopeFrom(ctx).thread == "" {
		return ErrNoThread
	}
	now := time.Now()
	_, span := r.tracer.Start(ctx, "context reset", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(now), trace.WithAttributes(Attributes(ctx)...))
	span.AddEvent(schema.EventContextReset, trace.WithTimestamp(now))
	span.End(trace.WithTimestamp(now))
	return nil
}
