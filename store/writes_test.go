package store_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/archive"
	"github.com/convtrace/convtrace/store/transfer"
)

// Every write path keeps the summaries exact through store.Begin and Done.
// Before each write the summaries are made current; after it, the
// cost_cells view (SQL that reads the cost summaries and cannot refresh
// them) and the threads list give what conversations FINAL gives. A path
// that skips the door leaves a summary current that is not, and fails.
func TestEveryWriteKeepsSummariesExact(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	st := store.New(conn, 100, time.Minute)
	now := time.Now()
	today := uint64(now.UnixNano()) / schema.DayNS * schema.DayNS
	at := func(daysBack, minute int) uint64 {
		return today - uint64(daysBack)*schema.DayNS + uint64(minute)*uint64(time.Minute)
	}
	rows := store.NewRowStore(conn)
	write := func(turns ...schema.Turn) error { return rows.Store(ctx, turns, nil) }
	if err := write(priced("a", at(3, 1)), priced("a", at(2, 1)), priced("b", at(3, 2)), priced("b", at(1, 2)),
		priced("c", at(2, 3)), priced("d", at(3, 4)), priced("e", at(1, 5))); err != nil {
		t.Fatal(err)
	}
	var exported bytes.Buffer
	if _, err := transfer.Export(ctx, conn, &exported, store.ExportFilter{ThreadID: "c"}, transfer.JSONL); err != nil {
		t.Fatal(err)
	}
	prices, err := pricing.ParsePrices([]byte("prices:\n  - {pattern: 'gpt-5', input: 3, output: 30}\n"))
	if err != nil {
		t.Fatal(err)
	}
	archived := t.TempDir()

	for _, step := range []struct {
		name  string
		write func() error
	}{
		{"the writer stores late turns", func() error { return write(priced("a", at(2, 40)), priced("f", at(3, 50))) }},
		{"delete", func() error { _, err := st.DeleteThread(ctx, "c", nil); return err }},
		{"import", func() error {
			_, err := transfer.Import(ctx, conn, bytes.NewReader(exported.Bytes()), "c.jsonl")
			return err
		}},
		{"reprice", func() error { _, err := store.Reprice(ctx, conn, prices, store.RepriceRange{}, nil); return err }},
		{"archive", func() error {
			_, err := archive.Run(ctx, conn, archived, time.Unix(0, int64(at(2, 0))), "", nil)
			return err
		}},
		{"prune", func() error {
			_, err := st.Prune(ctx, store.PruneScope{BeforeNS: at(1, 0)}, nil)
			return err
		}},
	} {
		if err := st.SummarizeCost(ctx, now); err != nil {
			t.Fatal(err)
		}
		listCosts(t, st, nil)
		before := finalByDay(t, conn)
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		after := finalByDay(t, conn)
		if fmt.Sprint(after) == fmt.Sprint(before) {
			t.Fatalf("%s changed no day's cost: the step tests nothing", step.name)
		}
		if view := viewByDay(t, conn); !sameCosts(view, after) {
			t.Errorf("%s: cost_cells by day %v, conversations FINAL %v", step.name, view, after)
		}
		final := finalByThread(t, conn)
		if list := listCosts(t, st, final); !sameCosts(list, final) {
			t.Errorf("%s: threads list costs %v, conversations FINAL %v", step.name, list, final)
		}
	}
}

// priced is a priced gpt-5 answer of thread at start.
func priced(thread string, start uint64) schema.Turn {
	in, out, cost := uint32(1000), uint32(100), 0.01
	span := fmt.Sprintf("%016x", start)
	return schema.Turn{
		TurnID: schema.ResponseTurnID(span, false), TraceID: span + span, SpanID: span,
		ThreadID: thread, Model: "gpt-5", Provider: "openai", Role: schema.RoleResponse, Seq: 1, Content: "ok",
		TokensIn: &in, TokensOut: &out, CostUSD: &cost, CostSource: schema.CostPriced,
		Status: schema.StatusOK, StartNS: start, DurationNS: uint64(time.Second),
	}
}

func sameCosts(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || math.Abs(v-w) > 1e-9 {
			return false
		}
	}
	return true
}

func costsBy(t *testing.T, conn driver.Conn, query string) map[string]float64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var (
			key  string
			cost float64
		)
		if err := rows.Scan(&key, &cost); err != nil {
			t.Fatal(err)
		}
		out[key] = cost
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func finalByDay(t *testing.T, conn driver.Conn) map[string]float64 {
	return costsBy(t, conn, `SELECT toString(intDiv(start_ns, `+schema.DaySQL+`)) AS d, toFloat64(sum(ifNull(cost_usd, 0)))
FROM conversations FINAL GROUP BY d`)
}

func viewByDay(t *testing.T, conn driver.Conn) map[string]float64 {
	return costsBy(t, conn, `SELECT toString(day) AS d, toFloat64(sum(ifNull(cost_usd, 0))) FROM cost_cells GROUP BY d`)
}

func finalByThread(t *testing.T, conn driver.Conn) map[string]float64 {
	return costsBy(t, conn, `SELECT thread_id, toFloat64(sum(ifNull(cost_usd, 0))) FROM conversations FINAL GROUP BY thread_id`)
}

// listCosts reads the threads list, which refreshes its summaries, and
// returns each thread's cost; a pruned thread's, which counts what the
// prune removed, it takes out of final instead.
func listCosts(t *testing.T, st store.Store, final map[string]float64) map[string]float64 {
	t.Helper()
	page, err := st.Threads(context.Background(), store.ThreadFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, th := range page.Threads {
		if th.PrunedTurns > 0 {
			delete(final, th.ID)
			continue
		}
		if th.CostUSD == nil {
			continue
		}
		out[th.ID] = *th.CostUSD
	}
	return out
}
