package store_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
)

// Reprice recomputes priced and unknown costs in place, with the same rules
// as pricing at ingest; provided costs and turns outside the range keep
// theirs.
func TestReprice(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	tp, err := collector.NewTracerProvider(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for _, c := range []struct {
		model string
		usage instrument.Usage
		cost  *float64
	}{
		{"gpt-5-2025-08-07", instrument.Usage{InputTokens: 1_000_000, OutputTokens: 300_000, CacheReadTokens: 600_000, ReasoningTokens: 100_000}, nil},
		{"claude-sonnet-4-5", instrument.Usage{InputTokens: 1000, OutputTokens: 10, CacheReadTokens: 50_000, CacheWriteTokens: 20_000}, nil},
		// Anthropic's own input_tokens, which leave the cache out: all of
		// the input is uncached.
		{"claude-haiku-4-5", instrument.Usage{InputTokens: 1000, OutputTokens: 10, CacheReadTokens: 50_000, CacheWriteTokens: 20_000}, nil},
		// More reasoning than output tokens: reasoning is beyond the output.
		{"gpt-5", instrument.Usage{InputTokens: 1000, OutputTokens: 100, ReasoningTokens: 400}, nil},
		{"qwen2.5-coder:32b", instrument.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000}, nil},
		{"gpt-5", instrument.Usage{InputTokens: 10, OutputTokens: 10}, ptr(0.5)},
	} {
		if _, err := rec.Call(instrument.WithThread(ctx, "th-reprice"), instrument.Turn{Model: c.model, Prompt: "p"},
			func(context.Context) (instrument.Response, error) {
				return instrument.Response{Content: "a", Usage: &c.usage, CostUSD: c.cost}, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// A turn priced long before the range: untouched.
	if err := conn.Exec(ctx, `INSERT INTO conversations (turn_id, thread_id, role, model, tokens_in, cost_usd, cost_source, start_ns)
SELECT 'old:response:1', 'th-old', 'response', 'gpt-5', toNullable(toUInt32(1000000)), toNullable(1.25), 'priced', toUInt64(1000000000)`); err != nil {
		t.Fatal(err)
	}

	prices, err := pricing.ParsePrices([]byte(`
prices:
  - {pattern: 'gpt-5', input: 2, output: 20, cache_read: 0.2, reasoning: 40}
  - {pattern: 'qwen2\.5-coder:32b', input: 0.1, output: 0.3}
  - {pattern: 'claude-haiku-4-5', input: 1, output: 5, cache_read: 0.1, cache_write: 1.25}
`))
	if err != nil {
		t.Fatal(err)
	}
	var progressed bool
	res, err := store.Reprice(ctx, conn, prices, store.RepriceRange{FromNS: uint64(time.Hour)},
		func(mutations, parts uint64) { progressed = true })
	if err != nil {
		t.Fatal(err)
	}
	if res.Priced != 4 || res.Unpriced != 1 || !progressed {
		t.Errorf("Reprice = %+v, progress reported %v; want 4 priced (2 gpt-5, claude-haiku, qwen), 1 unpriced (claude, no longer in the table), progress", res, progressed)
	}

	rows, err := conn.Query(ctx, `SELECT turn_id, model, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source
FROM conversations WHERE role = 'response' ORDER BY start_ns`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var (
			id, model, source           string
			in, out, read, write, think *uint32
			cost                        *float64
		)
		if err := rows.Scan(&id, &model, &in, &out, &read, &write, &think, &cost, &source); err != nil {
			t.Fatal(err)
		}
		// What pricing at ingest computes with the new prices must be what
		// the server computed.
		if p, ok := prices.Lookup(model); ok && source == "priced" && id != "old:response:1" {
			want := p.Cost(pricing.Usage{In: in, Out: out, CacheRead: read, CacheWrite: write, Reasoning: think})
			if cost == nil || math.Abs(*cost-want) > 1e-9 {
				t.Errorf("%s: repriced cost %v, Price.Cost gives %v", model, show(cost), want)
			}
		}
		got = append(got, fmt.Sprintf("%s %v %s", model, show(cost), source))
	}
	want := []string{
		"gpt-5 1.25 priced", // before the range
		// 400k uncached × 2 + 600k cached × 0.2 + 200k out × 20 + 100k reasoning × 40
		"gpt-5-2025-08-07 8.92 priced",
		"claude-sonnet-4-5 NULL unknown",
		// 1k uncached × 1 + 50k cache read × 0.1 + 20k cache write × 1.25 + 10 out × 5
		"claude-haiku-4-5 0.03105 priced",
		// 1k in × 2 + 100 out × 20 + 400 reasoning × 40
		"gpt-5 0.02 priced",
		"qwen2.5-coder:32b 0.5 priced",
		"gpt-5 0.5 provided",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after Reprice:\n got %q\nwant %q", got, want)
	}
}

func show(f *float64) any {
	if f == nil {
		return "NULL"
	}
	return math.Round(*f*1e9) / 1e9
}

func ptr[T any](v T) *T { return &v }
