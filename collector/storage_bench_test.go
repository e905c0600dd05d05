package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store/ddl"
)

// BenchmarkStorageAgentLoop records a 50-call agent loop whose prompts
// repeat the conversation so far, as every agent's do, and measures what
// ClickHouse stores for it (compressed bytes of its parts, merged):
// stored/unique is that against the loop's unique content (each distinct
// message and answer once, in bytes), whole/unique what storing every
// prompt whole takes (the same rows with their history put back, in a
// table of the same DDL: the storage before history was stored once), and
// stored/unique-compressed the stored bytes against the unique content
// alone in a table of one column. Two sizes: ~2 KB of new text a call,
// and the same with a 400 KB document in the first message, so that every
// prompt is 400 KB or more.
func BenchmarkStorageAgentLoop(b *testing.B) {
	for _, c := range agentLoopSizes {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			dsn := testkit.DSN(b)
			conn, err := ddl.Open(ctx, dsn) // with the settings the DDL needs
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			tp, err := collector.NewTracerProvider(dsn, collector.WithProject("bench"))
			if err != nil {
				b.Fatal(err)
			}
			rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
			unique := map[string]bool{}
			b.ResetTimer()
			for i := range b.N {
				thread := fmt.Sprintf("loop-%d", i)
				ctx := instrument.WithThread(context.Background(), thread)
				agentLoop(thread, c.document, unique, func(_ int, prompt []loopMsg, answer string) {
					p, err := json.Marshal(prompt)
					if err != nil {
						b.Fatal(err)
					}
					_, err = rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: string(p)},
						func(context.Context) (instrument.Response, error) {
							return instrument.Response{Content: answer}, nil
						})
					if err != nil {
						b.Fatal(err)
					}
				})
			}
			b.StopTimer()
			if err := tp.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			uniqueBytes := uniqueSize(unique)
			stored := storedBytes(b, conn, "conversations", "messages")
			whole := wholePromptBytes(b, conn)
			uniqueStored := uniqueContentBytes(b, conn, unique)
			b.ReportMetric(float64(stored)/float64(uniqueBytes), "stored/unique")
			b.ReportMetric(float64(whole)/float64(uniqueBytes), "whole/unique")
			b.ReportMetric(float64(stored)/float64(uniqueStored), "stored/unique-compressed")
			b.ReportMetric(float64(whole)/float64(uniqueStored), "whole/unique-compressed")
			b.ReportMetric(float64(uniqueBytes)/float64(b.N), "unique-B/loop")
		})
	}
}

// BenchmarkStorageAgentLoopOTLP sends the same loop as OTel GenAI chat
// spans through the Ingester, as an instrumented agent in any language
// does: every span carries the whole history in gen_ai.input.messages,
// the answer in gen_ai.output.messages, and usage. stored/unique counts
// the tables that keep the loop (conversations, messages, spans) against
// the unique content; turns/unique and spans/unique split it, and
// staging/unique is join_staging, whose records are dropped after a day.
// The goal is under 1.5×.
func BenchmarkStorageAgentLoopOTLP(b *testing.B) {
	for _, c := range agentLoopSizes {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			dsn := testkit.DSN(b)
			conn, err := ddl.Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			in, err := collector.NewIngester(dsn, collector.WithLogger(discard()))
			if err != nil {
				b.Fatal(err)
			}
			unique := map[string]bool{}
			b.ResetTimer()
			for i := range b.N {
				traceID := mustHex(fmt.Sprintf("%032x", i+1))
				thread := fmt.Sprintf("loop-%d", i)
				agentLoop(thread, c.document, unique, func(n int, prompt []loopMsg, answer string) {
					if _, err := in.Traces(ctx, agentLoopSpan(traceID, thread, n, prompt, answer)); err != nil {
						b.Fatal(err)
					}
				})
			}
			b.StopTimer()
			if err := in.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			uniqueBytes := float64(uniqueSize(unique))
			turns := storedBytes(b, conn, "conversations", "messages")
			spans := storedBytes(b, conn, "spans")
			b.ReportMetric(float64(turns+spans)/uniqueBytes, "stored/unique")
			b.ReportMetric(float64(turns)/uniqueBytes, "turns/unique")
			b.ReportMetric(float64(spans)/uniqueBytes, "spans/unique")
			b.ReportMetric(float64(storedBytes(b, conn, "join_staging"))/uniqueBytes, "staging/unique")
			b.ReportMetric(uniqueBytes/float64(b.N), "unique-B/loop")
		})
	}
}

// agentLoopSizes are the loops both storage benchmarks record: ~2 KB of
// new text a call, and the same after a 400 KB document.
var agentLoopSizes = []struct {
	name     string
	document int
}{{"new-2KB-a-call", 0}, {"prompts-400KB+", 400 << 10}}

// agentLoopSpan is call n of a loop as an OTel GenAI instrumentation
// exports it: one chat span with its content and usage as attributes.
func agentLoopSpan(traceID []byte, thread string, n int, prompt []loopMsg, answer string) []*tracepb.ResourceSpans {
	messages := func(ms ...loopMsg) string {
		out := make([]genai.Message, len(ms))
		for i, m := range ms {
			out[i] = genai.Message{Role: m.Role, Parts: []genai.Part{genai.Text(m.Content)}}
		}
		return genai.Render(out)
	}
	start := uint64(time.Now().UnixNano())
	return []*tracepb.ResourceSpans{{Resource: otlpResource, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		TraceId: traceID, SpanId: mustHex(fmt.Sprintf("%016x", n+1)), Name: "chat gpt-5", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: start, EndTimeUnixNano: start + uint64(time.Second),
		Attributes: []*commonpb.KeyValue{
			kv("gen_ai.operation.name", "chat"), kv("gen_ai.provider.name", "openai"),
			kv("gen_ai.request.model", "gpt-5"), kv("gen_ai.response.model", "gpt-5-2025-08-07"),
			kv("gen_ai.response.id", fmt.Sprintf("chatcmpl-%s-%d", thread, n)), kv("gen_ai.response.finish_reasons", `["stop"]`),
			kv("gen_ai.conversation.id", thread),
			ikv("gen_ai.usage.input_tokens", int64(2000+1000*n)), ikv("gen_ai.usage.output_tokens", 80),
			kv("gen_ai.input.messages", messages(prompt...)),
			kv("gen_ai.output.messages", messages(loopMsg{"assistant", answer})),
		},
	}}}}}}
}

// loopMsg is one message of the loop, in Chat Completions' shape.
type loopMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// agentLoop plays 50 calls on one thread: each prompt is the system
// prompt, the task (with the document), then every answer and tool output
// so far; each answer and tool output is new text. call records call n.
// It adds each distinct message and answer to unique.
func agentLoop(thread string, document int, unique map[string]bool, call func(n int, prompt []loopMsg, answer string)) {
	r := rand.New(rand.NewPCG(uint64(len(thread)), uint64(document)))
	msgs := []loopMsg{
		{"system", "You are a coding agent. " + words(r, 600)},
		{"user", "Fix the failing test. " + words(r, document)},
	}
	for n := range 50 {
		answer := fmt.Sprintf("Step %d: I will run the tests again. %s", n, words(r, 300))
		call(n, msgs, answer)
		output := fmt.Sprintf("Output of step %d:\n%s", n, words(r, 2000))
		msgs = append(msgs, loopMsg{"assistant", answer}, loopMsg{"user", output})
	}
	for _, m := range msgs {
		unique[m.Role+"\x00"+m.Content] = true
	}
}

// uniqueSize is the bytes of the loop's distinct messages.
func uniqueSize(unique map[string]bool) int {
	n := 0
	for m := range unique {
		n += len(m)
	}
	return n
}

// vocabulary is made-up words of a few letters, as text is: compressible,
// but not a repeated string.
var vocabulary = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 4000)
	for i := range out {
		var w strings.Builder
		for range 2 + r.IntN(8) {
			w.WriteByte(byte('a' + r.IntN(26)))
		}
		out[i] = w.String()
	}
	return out
}()

// words returns about n bytes of text.
func words(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		b.WriteByte(' ')
	}
	return b.String()
}

// storedBytes is the compressed size of tables' parts, merged first.
func storedBytes(b *testing.B, conn driver.Conn, tables ...string) uint64 {
	ctx := context.Background()
	var total uint64
	for _, table := range tables {
		if err := conn.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			b.Fatal(err)
		}
		var n uint64
		if err := conn.QueryRow(ctx, `SELECT sum(data_compressed_bytes) FROM system.parts
WHERE database = currentDatabase() AND table = ? AND active`, table).Scan(&n); err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}

// wholePromptBytes stores the loop's rows again with every prompt whole,
// in a table of the same DDL, and returns its size.
func wholePromptBytes(b *testing.B, conn driver.Conn) uint64 {
	ctx := context.Background()
	cols := slices.DeleteFunc(slices.Clone(schema.TurnColumns), func(c string) bool { return c == "history" })
	sel := slices.Clone(cols)
	sel[slices.Index(sel, "content")] = schema.WholeContentSQL
	var version string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		b.Fatal(err)
	}
	caps, err := ddl.DetectCapabilities(version)
	if err != nil {
		b.Fatal(err)
	}
	if caps.LowCardinalitySetting {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"allow_experimental_low_cardinality_type": 1}))
	}
	for _, q := range []string{
		"CREATE TABLE conversations_whole AS conversations",
		"INSERT INTO conversations_whole (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") +
			" FROM conversations " + schema.HistoryJoinSQL,
	} {
		if err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return storedBytes(b, conn, "conversations_whole")
}

// uniqueContentBytes stores each distinct message once in a table of one
// column and returns its size.
func uniqueContentBytes(b *testing.B, conn driver.Conn, unique map[string]bool) uint64 {
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE TABLE unique_content (text String) ENGINE = MergeTree ORDER BY tuple()"); err != nil {
		b.Fatal(err)
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO unique_content (text)")
	if err != nil {
		b.Fatal(err)
	}
	for m := range unique {
		if err := batch.Append(m); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		b.Fatal(err)
	}
	return storedBytes(b, conn, "unique_content")
}
