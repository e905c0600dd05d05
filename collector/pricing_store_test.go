package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
)

// Turns are priced at ingest; the source of every cost is stored, and an
// unknown model keeps a NULL cost.
func TestCostAtIngest(t *testing.T) {
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("cost"), collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	calls := []struct {
		model string
		usage *instrument.Usage
		cost  *float64
	}{
		{"gpt-5-2025-08-07", &instrument.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 800_000}, nil},
		{"claude-sonnet-4-5", &instrument.Usage{InputTokens: 2_000_000, OutputTokens: 0, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}, nil},
		{"gpt-5", &instrument.Usage{InputTokens: 10, OutputTokens: 10}, ptr(0.5)},
		{"qwen2.5-coder:32b", &instrument.Usage{InputTokens: 10, OutputTokens: 10}, nil},
		{"gpt-5", nil, nil},
	}
	for i, c := range calls {
		ctx := instrument.WithThread(context.Background(), "th-cost")
		_, err := rec.Call(ctx, instrument.Turn{Provider: "p", Model: c.model, Prompt: fmt.Sprint("call ", i)},
			func(context.Context) (instrument.Response, error) {
				return instrument.Response{Content: "ok", Usage: c.usage, CostUSD: c.cost}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(context.Background(), `
SELECT role, model, ifNull(toString(round(cost_usd, 9)), 'NULL'), cost_source FROM conversations ORDER BY start_ns, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var role, model, cost, source string
		if err := rows.Scan(&role, &model, &cost, &source); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %q", role, model, cost, source))
	}
	want := []string{
		`prompt gpt-5-2025-08-07 NULL ""`,
		// 200k uncached at 1.25, 800k cached at 0.125, 100k out at 10.
		`response gpt-5-2025-08-07 1.35 "priced"`,
		`prompt claude-sonnet-4-5 NULL ""`,
		// 1M read at 0.30 and 1M written at 3.75, none uncached.
		`response claude-sonnet-4-5 4.05 "priced"`,
		`prompt gpt-5 NULL ""`,
		`response gpt-5 0.5 "provided"`,
		`prompt qwen2.5-coder:32b NULL ""`,
		`response qwen2.5-coder:32b NULL "unknown"`,
		`prompt gpt-5 NULL ""`,
		`response gpt-5 NULL "none"`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("turns:\n got %q\nwant %q", got, want)
	}

	// A writer that leaves cost_source out (an older convtrace, another
	// tool) gets the column's DEFAULT.
	if err := conn.Exec(context.Background(), `
INSERT INTO conversations (turn_id, thread_id, role, tokens_in, cost_usd, start_ns)
SELECT 'old:1', 'th-old', 'response', toNullable(toUInt32(5)), toNullable(0.25), toUInt64(1)
UNION ALL SELECT 'old:2', 'th-old', 'response', toNullable(toUInt32(5)), CAST(NULL AS Nullable(Float64)), toUInt64(2)
UNION ALL SELECT 'old:3', 'th-old', 'prompt', CAST(NULL AS Nullable(UInt32)), CAST(NULL AS Nullable(Float64)), toUInt64(3)`); err != nil {
		t.Fatal(err)
	}
	var defaults []string
	r2, err := conn.Query(context.Background(), `SELECT cost_source FROM conversations WHERE thread_id = 'th-old' ORDER BY start_ns`)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	for r2.Next() {
		var s string
		if err := r2.Scan(&s); err != nil {
			t.Fatal(err)
		}
		defaults = append(defaults, s)
	}
	if want := []string{"provided", "unknown", ""}; fmt.Sprint(defaults) != fmt.Sprint(want) {
		t.Errorf("cost_source DEFAULT for rows without it: got %q, want %q", defaults, want)
	}
}
