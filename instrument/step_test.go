package instrument_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// A step's span is the parent of the calls made inside it, carries the
// context's scope, and fails with fn's error.
func TestStepNestsCalls(t *testing.T) {
	rec, sr := newRecorder()
	ctx := instrument.WithPhase(instrument.WithThread(context.Background(), "th"), "execute")
	boom := errors.New("tests failed")
	err := rec.Step(ctx, "execute loop", func(ctx context.Context) error {
		_, _ = rec.Call(ctx, instrument.Turn{Model: "m", Prompt: "p"}, func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "a"}, nil
		})
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Step returned %v, want fn's error", err)
	}
	spans := sr.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the call and the step", len(spans))
	}
	call, step := spans[0], spans[1]
	if step.Name() != "execute loop" || step.Status().Code != codes.Error || step.Status().Description != "tests failed" {
		t.Errorf("step span %q status %v, want execute loop failed with the error", step.Name(), step.Status())
	}
	if call.Parent().SpanID() != step.SpanContext().SpanID() {
		t.Errorf("call's parent %s, want the step %s", call.Parent().SpanID(), step.SpanContext().SpanID())
	}
	got := attrMap(step.Attributes())
	if got[schema.KeyConversationID] != "th" || got[schema.KeyPhase] != "execute" {
		t.Errorf("step attributes %v, want thread th and phase execute", got)
	}
}
