package instrument_test

import (
	"context"
	"testing"
	"time"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// A caller reports a call's time to first token by FirstToken, the first
// report counting, or in the Response; a call told nothing has none.
func TestTimeToFirstTokenAttribute(t *testing.T) {
	rec, sr := newRecorder()
	_, c := rec.Start(context.Background(), instrument.Turn{Model: "m"})
	at := time.Now().Add(2 * time.Second) // after the start, however slow the machine
	c.FirstToken(at)
	c.FirstToken(at.Add(time.Hour))
	c.End(instrument.Response{Content: "a", TimeToFirstToken: time.Hour}, nil)

	_, _ = rec.Call(context.Background(), instrument.Turn{Model: "m"}, func(context.Context) (instrument.Response, error) {
		return instrument.Response{Content: "b", TimeToFirstToken: 1500 * time.Millisecond}, nil
	})
	_, _ = rec.Call(context.Background(), instrument.Turn{Model: "m"}, func(context.Context) (instrument.Response, error) {
		return instrument.Response{Content: "c"}, nil
	})

	spans := sr.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	first := attrMap(spans[0].Attributes())[schema.KeyTimeToFirstChunk]
	if d, err := time.ParseDuration(first + "s"); err != nil || d < 2*time.Second || d >= time.Hour {
		t.Errorf("FirstToken 2 s after the start: %s = %q, want about 2 (seconds)", schema.KeyTimeToFirstChunk, first)
	}
	if got := attrMap(spans[1].Attributes())[schema.KeyTimeToFirstChunk]; got != "1.5" {
		t.Errorf("Response.TimeToFirstToken 1.5 s: %s = %q, want 1.5", schema.KeyTimeToFirstChunk, got)
	}
	if got, ok := attrMap(spans[2].Attributes())[schema.KeyTimeToFirstChunk]; ok {
		t.Errorf("a call told nothing has %s = %q", schema.KeyTimeToFirstChunk, got)
	}
}
