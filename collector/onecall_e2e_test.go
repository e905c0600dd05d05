package collector_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/internal/testkit"
)

// Spans shaped as the Vercel AI SDK and as a provider SDK beside an
// instrumentation make them, sent by the real OTel SDK over OTLP/HTTP to
// the receiver: each provider call is stored once, whole, with the
// pipeline's hints, and every span keeps its spans row.
func TestEverySourceOnceAndWhole(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	srv := httptest.NewServer(otlpreceiver.NewHTTPHandler(in))
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "ts-agents"))))

	// The AI SDK: generateText around one doGenerate.
	ai := tp.Tracer("ai")
	meta := []attribute.KeyValue{attribute.String("ai.telemetry.functionId", "planner"),
		attribute.String("ai.telemetry.metadata.threadId", "vercel-e2e"), attribute.String("ai.telemetry.metadata.phase", "plan"),
		attribute.String("ai.telemetry.metadata.round", "2"), attribute.String("ai.model.id", "gpt-4o"), attribute.String("ai.model.provider", "openai.chat")}
	wctx, wrapper := ai.Start(ctx, "ai.generateText", trace.WithAttributes(append(meta, attribute.String("ai.operationId", "ai.generateText"),
		attribute.String("ai.prompt", `{"prompt":"Plan the fix"}`), attribute.String("ai.response.text", "1. Fix it"),
		attribute.Int("ai.usage.promptTokens", 12), attribute.Int("ai.usage.completionTokens", 4))...))
	_, call := ai.Start(wctx, "ai.generateText.doGenerate", trace.WithAttributes(append(meta, attribute.String("ai.operationId", "ai.generateText.doGenerate"),
		attribute.String("ai.prompt.messages", `[{"role":"user","content":[{"type":"text","text":"Plan the fix"}]}]`),
		attribute.String("ai.response.text", "1. Fix it"), attribute.String("gen_ai.system", "openai.chat"),
		attribute.String("gen_ai.request.model", "gpt-4o"), attribute.Int("gen_ai.usage.input_tokens", 12), attribute.Int("gen_ai.usage.output_tokens", 4))...))
	call.End()
	wrapper.End()

	// An instrumentation's span with content, and the provider SDK's own
	// span of the same call inside it, with the usage that counts the cache.
	ictx, inst := tp.Tracer("opentelemetry.instrumentation.anthropic").Start(ctx, "anthropic.chat", trace.WithAttributes(
		attribute.String("traceloop.association.properties.thread_id", "dup-e2e"), attribute.String("llm.request.type", "chat"),
		attribute.String("gen_ai.system", "Anthropic"), attribute.String("gen_ai.request.model", "claude-sonnet-4-5"),
		attribute.String("gen_ai.prompt.0.role", "user"), attribute.String("gen_ai.prompt.0.content", "Summarise"),
		attribute.String("gen_ai.completion.0.role", "assistant"), attribute.String("gen_ai.completion.0.content", "Three fixes."),
		attribute.Int("gen_ai.usage.prompt_tokens", 35), attribute.Int("gen_ai.usage.completion_tokens", 20)))
	_, sdkSpan := tp.Tracer("@anthropic-ai/sdk").Start(ictx, "chat claude-sonnet-4-5", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "anthropic"),
		attribute.String("gen_ai.request.model", "claude-sonnet-4-5"), attribute.Int("gen_ai.usage.input_tokens", 18165),
		attribute.Int("gen_ai.usage.output_tokens", 20), attribute.Int("gen_ai.usage.cache_read.input_tokens", 13700),
		attribute.Int("gen_ai.usage.cache_creation.input_tokens", 4430)))
	sdkSpan.End()
	inst.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = nil
		rows, err := conn.Query(ctx, `SELECT thread_id, role, speaker, phase, round, provider, content, ifNull(toString(tokens_in), '-'), ifNull(toString(tokens_cache_read), '-')
FROM conversations FINAL WHERE thread_id IN ('vercel-e2e', 'dup-e2e') ORDER BY thread_id, start_ns, seq`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var thread, role, speaker, phase, provider, content, in, read string
			var round uint16
			if err := rows.Scan(&thread, &role, &speaker, &phase, &round, &provider, &content, &in, &read); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Join([]string{thread, role, speaker, phase, string(rune('0' + round)), provider, content, in, read}, "|"))
		}
		rows.Close()
		if len(got) >= 4 {
			break
		}
	}
	want := []string{
		`dup-e2e|prompt|||0|anthropic|[{"role":"user","parts":[{"type":"text","content":"Summarise"}]}]|-|-`,
		`dup-e2e|response|||0|anthropic|Three fixes.|18165|13700`,
		`vercel-e2e|prompt|planner|plan|2|openai|[{"role":"user","parts":[{"type":"text","content":"Plan the fix"}]}]|-|-`,
		`vercel-e2e|response|planner|plan|2|openai|1. Fix it|12|-`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored turns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := queryCount(t, conn, "SELECT count() FROM spans FINAL WHERE thread_id IN ('vercel-e2e', 'dup-e2e') OR name = 'chat claude-sonnet-4-5'"); n != 4 {
		t.Errorf("%d spans rows, want all 4", n)
	}
	// The call is written under the provider SDK's span, the inner one;
	// the instrumentation's span is folded into it.
	sdkID := sdkSpan.SpanContext().SpanID().String()
	if n := queryCount(t, conn, "SELECT count() FROM conversations FINAL WHERE thread_id = 'dup-e2e' AND span_id = ?", sdkID); n != 2 {
		t.Errorf("%d turns under the SDK's span %s, want the call's 2", n, sdkID)
	}
	if n := queryCount(t, conn, "SELECT count() FROM join_staging WHERE kind = 2 AND pos = 1 AND span_id = ?", inst.SpanContext().SpanID().String()); n != 1 {
		t.Errorf("%d folded marks of the instrumentation's span, want 1", n)
	}
}

func queryCount(t *testing.T, conn interface {
	QueryRow(context.Context, string, ...any) driver.Row
}, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
