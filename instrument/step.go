package instrument

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// Step runs fn, one stage of a pipeline (a phase, a tool loop, a run), in a
// span named name that carries the context's thread, phase, round, speaker
// and agent, so the calls fn makes nest under it. It returns fn's error
// unchanged, marking the span failed; a panic is recorded and re-raised.
func (r *Recorder) Step(ctx context.Context, name string, fn func(context.Context) error) error {
	ctx, span := r.tracer.Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(Attributes(ctx)...))
	defer endOnPanic(span)
	if err := fn(ctx); err != nil {
		endFailed(span, err)
		return err
	}
	span.End()
	return nil
}
