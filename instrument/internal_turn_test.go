package instrument_test

import (
	"context"
	"testing"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// Turn.Internal is the bool attribute convtrace.internal on the call's
// span; other calls do not carry the attribute at all.
func TestCallInternal(t *testing.T) {
	rec, sr := newRecorder()
	answer := func(context.Context) (instrument.Response, error) { return instrument.Response{Content: "ok"}, nil }
	for _, internal := range []bool{true, false} {
		if _, err := rec.Call(context.Background(), instrument.Turn{Prompt: "p", Internal: internal}, answer); err != nil {
			t.Fatal(err)
		}
	}
	spans := sr.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for i, want := range []string{"true", ""} {
		if got := attrMap(spans[i].Attributes())[schema.KeyInternal]; got != want {
			t.Errorf("call %d: %s = %q, want %q", i, schema.KeyInternal, got, want)
		}
	}
}
