package instrument

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/schema"
)

// scope is what the context says about who is speaking where. It is copied
// on every With* call, so contexts never share a mutable value.
type scope struct {
	thread, phase, speaker, agent string
	round                         int
	hasRound                      bool
	threadAttrs                   []attribute.KeyValue // copied before each change
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) scope {
	s, _ := ctx.Value(scopeKey{}).(scope)
	return s
}

func with(ctx context.Context, f func(*scope)) context.Context {
	s := scopeFrom(ctx)
	f(&s)
	return context.WithValue(ctx, scopeKey{}, s)
}

// WithThread returns a context whose calls belong to conversation thread id.
func WithThread(ctx context.Context, id string) context.Context {
	return with(ctx, func(s *scope) { s.thread = id })
}

// WithPhase returns a context whose calls belong to a pipeline phase such as
// plan, review, execute or verify.
func WithPhase(ctx context.Context, phase string) context.Context {
	return with(ctx, func(s *scope) { s.phase = phase })
}

// WithRound returns a context whose calls belong to revision round n.
func WithRound(ctx context.Context, n int) context.Context {
	return with(ctx, func(s *scope) { s.round, s.hasRound = n, true })
}

// WithSpeaker returns a context whose calls are spoken by speaker, e.g.
// "claude-planner".
func WithSpeaker(ctx context.Context, speaker string) context.Context {
	return with(ctx, func(s *scope) { s.speaker = speaker })
}

// WithAgent returns a context whose calls are made by sub-agent name; the
// empty name is the main agent.
func WithAgent(ctx context.Context, name string) context.Context {
	return with(ctx, func(s *scope) { s.agent = name })
}

// WithThreadAttr returns a context whose calls set thread attribute key
// (convtrace.thread.KEY) to value: a task or card id, a run's label. The
// viewer filters threads by it (attr.KEY=value). Setting a key again
// replaces its value.
func WithThreadAttr(ctx context.Context, key, value string) context.Context {
	kv := attribute.String(schema.KeyThreadAttrPrefix+key, value)
	return with(ctx, func(s *scope) {
		attrs := make([]attribute.KeyValue, 0, len(s.threadAttrs)+1)
		for _, a := range s.threadAttrs {
			if a.Key != kv.Key {
				attrs = append(attrs, a)
			}
		}
		s.threadAttrs = append(attrs, kv)
	})
}

// Attributes returns the attributes the context's scope puts on a span.
func Attributes(ctx context.Context) []attribute.KeyValue {
	return appendScope(nil, scopeFrom(ctx))
}

func appendScope(attrs []attribute.KeyValue, s scope) []attribute.KeyValue {
	if s.thread != "" {
		attrs = append(attrs, attribute.String(schema.KeyConversationID, s.thread))
	}
	if s.phase != "" {
		attrs = append(attrs, attribute.String(schema.KeyPhase, s.phase))
	}
	if s.hasRound {
		attrs = append(attrs, attribute.Int(schema.KeyRound, s.round))
	}
	if s.speaker != "" {
		attrs = append(attrs, attribute.String(schema.KeySpeaker, s.speaker))
	}
	if s.agent != "" {
		attrs = append(attrs, attribute.String(schema.KeyAgent, s.agent))
	}
	return append(attrs, s.threadAttrs...)
}
