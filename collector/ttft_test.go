package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
)

// OTLP spans that carry a time to first token in any convention that has
// one store it in ttft_ns on the call's response turn, and nowhere else;
// a value outside the call is unknown.
func TestIngesterTimeToFirstToken(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	ctx := context.Background()

	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	genAI := []*commonpb.KeyValue{
		kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"), kv("gen_ai.request.model", "gpt-4o"),
		kv("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Hi?"}]}]`),
		kv("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Hello."}],"finish_reason":"stop"}]`),
	}
	vercel := []*commonpb.KeyValue{
		kv("ai.operationId", "ai.streamText.doStream"), kv("ai.model.id", "gpt-4o"), kv("ai.model.provider", "openai.chat"),
		kv("ai.prompt.messages", `[{"role":"user","content":[{"type":"text","text":"Hi?"}]}]`), kv("ai.response.text", "Hello."),
	}
	tests := []struct {
		spanID string
		attrs  []*commonpb.KeyValue
		want   time.Duration
	}{
		{"1000000000000001", append(genAI[:len(genAI):len(genAI)], dkv("gen_ai.response.time_to_first_chunk", 0.25)), 250 * time.Millisecond},
		{"1000000000000002", append(vercel[:len(vercel):len(vercel)], dkv("ai.response.msToFirstChunk", 125.5)), 125500 * time.Microsecond},
		{"1000000000000003", append(genAI[:len(genAI):len(genAI)], kv("langfuse.observation.completion_start_time", `"2026-11-01T12:00:00.400Z"`)), 400 * time.Millisecond},
		{"1000000000000004", append(genAI[:len(genAI):len(genAI)], dkv("gen_ai.response.time_to_first_chunk", 1.5)), 0}, // longer than the call
		{"1000000000000005", append(genAI[:len(genAI):len(genAI)], dkv("gen_ai.response.time_to_first_chunk", -0.1)), 0},
		{"1000000000000006", genAI, 0},
	}
	var spans []*tracepb.Span
	for _, tt := range tests {
		spans = append(spans, &tracepb.Span{
			TraceId: mustHex("6b8efff798038103d269b633813fc60c"), SpanId: mustHex(tt.spanID),
			Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
			StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(time.Second).UnixNano()),
			Attributes: tt.attrs,
		})
	}
	req := []*tracepb.ResourceSpans{{Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}
	if _, err := in.Traces(ctx, req); err != nil {
		t.Fatal(err)
	}

	for _, tt := range tests {
		rows, err := conn.Query(ctx, "SELECT role, ttft_ns FROM conversations FINAL WHERE span_id = ? ORDER BY seq", tt.spanID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var (
				role string
				ttft uint64
			)
			if err := rows.Scan(&role, &ttft); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %v", role, time.Duration(ttft)))
		}
		rows.Close()
		want := []string{"prompt 0s", fmt.Sprintf("response %v", tt.want)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("span %s (%v): turns %q, want %q", tt.spanID, tt.attrs[len(tt.attrs)-1], got, want)
		}
	}
}
