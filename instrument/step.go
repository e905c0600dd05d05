package instrument

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// Step runs fn, one stage of a pipeline (a phase, an agent's tool loop, a
// whole run), inside a span named name, so that the provider calls and tool
// executions fn makes nest under it in the trace waterfall. The span carries
// the context's thread, phase, round, speaker and agent. It returns fn's
// error unchanged and marks the span failed with it; a panic in fn is
// recorded and re-raised.
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
