package instrument

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// SpanProcessor stamps the thread, phase, round, speaker and agent of the
// parent context on every span that starts, so spans of other
// instrumentations (HTTP clients, databases, tools) land in the right place
// of the conversation. An attribute the span already has is left alone.
type SpanProcessor struct{}

var _ sdktrace.SpanProcessor = SpanProcessor{}

// NewSpanProcessor returns a SpanProcessor; register it on the tracer
// provider with sdktrace.WithSpanProcessor.
func NewSpanProcessor() SpanProcessor { return SpanProcessor{} }

// OnStart stamps the context's attributes on s.
func (SpanProcessor) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	attrs := Attributes(parent)
	if len(attrs) == 0 {
		return
	}
	have := make(map[attribute.Key]bool, len(s.Attributes()))
	for _, a := range s.Attributes() {
		have[a.Key] = true
	}
	missing := attrs[:0]
	for _, a := range attrs {
		if !have[a.Key] {
			missing = append(missing, a)
		}
	}
	s.SetAttributes(missing...)
}

// OnEnd does nothing.
func (SpanProcessor) OnEnd(sdktrace.ReadOnlySpan) {}

// Shutdown does nothing.
func (SpanProcessor) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (SpanProcessor) ForceFlush(context.Context) error { return nil }
