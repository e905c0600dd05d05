package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/ddl"
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
	for _, c := range []struct {
		name     string
		document int
	}{{"new-2KB-a-call", 0}, {"prompts-400KB+", 400 << 10}} {
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
				agentLoop(b, rec, fmt.Sprintf("loop-%d", i), c.document, unique)
			}
			b.StopTimer()
			if err := tp.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			uniqueBytes := 0
			for m := range unique {
				uniqueBytes += len(m)
			}
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

// agentLoop makes 50 calls on one thread: each prompt is the system
// prompt, the task (with the document), then every answer and tool output
// so far; each answer and tool output is new text. It adds each distinct
// message and answer to unique.
func agentLoop(b *testing.B, rec *instrument.Recorder, thread string, document int, unique map[string]bool) {
	r := rand.New(rand.NewPCG(uint64(len(thread)), uint64(document)))
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	msgs := []msg{
		{"system", "You are a coding agent. " + words(r, 600)},
		{"user", "Fix the failing test. " + words(r, document)},
	}
	ctx := instrument.WithThread(context.Background(), thread)
	for call := range 50 {
		prompt, err := json.Marshal(msgs)
		if err != nil {
			b.Fatal(err)
		}
		answer := fmt.Sprintf("Step %d: I will run the tests again. %s", call, words(r, 300))
		_, err = rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: string(prompt)},
			func(context.Context) (instrument.Response, error) {
				return instrument.Response{Content: answer}, nil
			})
		if err != nil {
			b.Fatal(err)
		}
		output := fmt.Sprintf("Output of step %d:\n%s", call, words(r, 2000))
		msgs = append(msgs, msg{"assistant", answer}, msg{"user", output})
	}
	for _, m := range msgs {
		unique[m.Role+"\x00"+m.Content] = true
	}
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
