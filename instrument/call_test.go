package instrument_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

func newRecorder(opts ...instrument.Option) (*instrument.Recorder, *tracetest.SpanRecorder) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	return instrument.NewRecorder(append(opts, instrument.WithTracerProvider(tp))...), sr
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func TestCallSpan(t *testing.T) {
	rec, sr := newRecorder()
	ctx := instrument.WithRound(instrument.WithPhase(instrument.WithThread(context.Background(), "th"), "plan"), 2)
	resp, err := rec.Call(ctx, instrument.Turn{Provider: "anthropic", Model: "claude-opus-4-1", Prompt: "plan", Speaker: "planner", SessionID: "s-1"},
		func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "steps", Model: "claude-opus-4-1-20250805", Usage: &instrument.Usage{InputTokens: 7, OutputTokens: 3, CacheWriteTokens: 5}}, nil
		})
	if err != nil || resp.Content != "steps" {
		t.Fatalf("Call = %+v, %v", resp, err)
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if resp.TurnID != s.SpanContext().SpanID().String()+":response:1" {
		t.Errorf("Response.TurnID = %q", resp.TurnID)
	}
	if s.Name() != "chat claude-opus-4-1" || s.SpanKind().String() != "client" || s.Status().Code == codes.Error {
		t.Errorf("span %q kind %s status %v", s.Name(), s.SpanKind(), s.Status())
	}
	want := map[string]string{
		schema.KeyConversationID: "th", schema.KeyPhase: "plan", schema.KeyRound: "2", schema.KeySpeaker: "planner",
		schema.KeyProviderName: "anthropic", schema.KeyRequestModel: "claude-opus-4-1", schema.KeyResponseModel: "claude-opus-4-1-20250805",
		schema.KeySessionID: "s-1", schema.KeyOperationName: "chat", schema.KeyInputTokens: "7", schema.KeyOutputTokens: "3",
		schema.KeyCacheWriteTokens: "5",
	}
	got := attrMap(s.Attributes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
	if ev := s.Events(); len(ev) != 2 || ev[0].Name != schema.EventPrompt || ev[1].Name != schema.EventResponse ||
		attrMap(ev[0].Attributes)[schema.KeyContent] != "plan" || attrMap(ev[1].Attributes)[schema.KeyContent] != "steps" {
		t.Errorf("events = %+v", ev)
	}
}

func TestCallFailure(t *testing.T) {
	rec, sr := newRecorder()
	wantErr := errors.New("context deadline exceeded talking to the provider")
	resp, err := rec.Call(context.Background(), instrument.Turn{Model: "m", Prompt: "p"}, func(context.Context) (instrument.Response, error) {
		return instrument.Response{}, wantErr
	})
	if !errors.Is(err, wantErr) {
		t.Fatalf("Call returned %v, want the call's error", err)
	}
	s := sr.Ended()[0]
	if s.Status().Code != codes.Error || s.Status().Description != wantErr.Error() {
		t.Errorf("status = %+v", s.Status())
	}
	if resp.TurnID != s.SpanContext().SpanID().String()+":error:1" {
		t.Errorf("TurnID of a failed call = %q", resp.TurnID)
	}
	var exc bool
	for _, e := range s.Events() {
		exc = exc || (e.Name == "exception" && attrMap(e.Attributes)["exception.message"] == wantErr.Error())
	}
	if !exc {
		t.Errorf("no exception event with the message in %+v", s.Events())
	}
}

func TestCallPanicEndsSpanAndRepanics(t *testing.T) {
	rec, sr := newRecorder()
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the call's own panic", p)
		}
		if n := len(sr.Ended()); n != 1 || sr.Ended()[0].Status().Code != codes.Error {
			t.Errorf("after a panic: %d ended spans, want 1 with error status", n)
		}
	}()
	_, _ = rec.Call(context.Background(), instrument.Turn{}, func(context.Context) (instrument.Response, error) { panic("boom") })
}

// TestThreadAttr: WithThreadAttr puts convtrace.thread.KEY on every span
// under the context, a key set again taking its new value, and the turn's
// own thread, phase and speaker keep the attributes.
func TestThreadAttr(t *testing.T) {
	rec, sr := newRecorder()
	ctx := instrument.WithThreadAttr(instrument.WithThreadAttr(context.Background(), "task", "T-1"), "ci", "no")
	ctx = instrument.WithThreadAttr(ctx, "ci", "yes")
	if _, err := rec.Call(ctx, instrument.Turn{Prompt: "p", Thread: "th", Speaker: "s"}, func(context.Context) (instrument.Response, error) {
		return instrument.Response{Content: "r"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	got := attrMap(sr.Ended()[0].Attributes())
	for k, v := range map[string]string{schema.KeyThreadAttrPrefix + "task": "T-1", schema.KeyThreadAttrPrefix + "ci": "yes", schema.KeyConversationID: "th", schema.KeySpeaker: "s"} {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
	if n := len(instrument.Attributes(ctx)); n != 2 {
		t.Errorf("%d scope attributes, want the 2 thread attributes", n)
	}
}
