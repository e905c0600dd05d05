package collector_test

import (
	"context"
	"slices"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// TestIngestContentStoredOnce sends two calls of an agent loop as OTel
// GenAI spans over OTLP, the second repeating the first in its input, and
// a span that is no call: the calls' spans rows keep their usage and
// custom attributes and the marker, not their content, which their turns
// hold whole; the other span keeps every attribute.
func TestIngestContentStoredOnce(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	text := func(role, s string) genai.Message {
		return genai.Message{Role: role, Parts: []genai.Part{genai.Text(s)}}
	}
	first := []genai.Message{text("system", "You fix tests."), text("user", "The test fails.")}
	second := append(slices.Clone(first), text("assistant", "I will run it."), text("user", "FAIL: want 2, got 3"))
	start := uint64(time.Now().UnixNano())
	call := func(id string, n int, input []genai.Message, answer string) *tracepb.Span {
		return &tracepb.Span{
			TraceId: mustHex("6b8efff798038103d269b633813fc60c"), SpanId: mustHex(id), Name: "chat gpt-5",
			StartTimeUnixNano: start + uint64(n)*uint64(time.Second), EndTimeUnixNano: start + uint64(n+1)*uint64(time.Second),
			Attributes: []*commonpb.KeyValue{
				kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"), kv("gen_ai.request.model", "gpt-5"),
				kv("gen_ai.conversation.id", "once"), ikv("gen_ai.usage.input_tokens", 40), ikv("gen_ai.usage.output_tokens", 8),
				kv("app.attempt", "1"),
				kv("gen_ai.input.messages", genai.Render(input)),
				kv("gen_ai.output.messages", genai.Render([]genai.Message{text("assistant", answer)})),
			},
		}
	}
	other := &tracepb.Span{
		TraceId: mustHex("6b8efff798038103d269b633813fc60c"), SpanId: mustHex("c000000000000003"), Name: "load page",
		StartTimeUnixNano: start, EndTimeUnixNano: start + 1,
		Attributes: []*commonpb.KeyValue{kv("input.value", "https://example.com"), kv("output.value", "<html>")},
	}
	if _, err := in.Traces(context.Background(), []*tracepb.ResourceSpans{{Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		call("c000000000000001", 0, first, "I will run it."), call("c000000000000002", 1, second, "Fixed."), other,
	}}}}}); err != nil {
		t.Fatal(err)
	}

	attrs := func(spanID string) []string {
		return testkit.Strings(t, conn, "SELECT arrayJoin(arrayMap((k, v) -> concat(k, '=', v), attributes.key, attributes.value)) FROM spans WHERE span_id = ?", spanID)
	}
	for _, id := range []string{"c000000000000001", "c000000000000002"} {
		got := attrs(id)
		want := []string{"gen_ai.operation.name=chat", "gen_ai.provider.name=openai", "gen_ai.request.model=gpt-5",
			"gen_ai.conversation.id=once", "gen_ai.usage.input_tokens=40", "gen_ai.usage.output_tokens=8", "app.attempt=1",
			schema.KeyContentInTurns + "=" + schema.ContentInTurns}
		if !slices.Equal(got, want) {
			t.Errorf("spans row %s attributes\n%q\nwant\n%q", id, got, want)
		}
	}
	if got := attrs("c000000000000003"); !slices.Equal(got, []string{"input.value=https://example.com", "output.value=<html>"}) {
		t.Errorf("spans row of the span that is no call: %q, want every attribute", got)
	}

	const turns = "SELECT concat(span_id, ' ', role, ' ', " + schema.WholeContentSQL + ") FROM conversations " + schema.HistoryJoinSQL +
		" WHERE thread_id = 'once' ORDER BY span_id, seq LIMIT 1 BY turn_id"
	want := []string{
		"c000000000000001 prompt " + genai.Render(first), "c000000000000001 response I will run it.",
		"c000000000000002 prompt " + genai.Render(second), "c000000000000002 response Fixed.",
	}
	got := testkit.Strings(t, conn, turns)
	for deadline := time.Now().Add(10 * time.Second); len(got) < len(want) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // a staged call may be written by the sweep
		got = testkit.Strings(t, conn, turns)
	}
	if !slices.Equal(got, want) {
		t.Errorf("turns, prompts put back whole:\n%q\nwant\n%q", got, want)
	}
}
