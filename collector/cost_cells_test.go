package collector

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// The cost_cells view (the README's cost SQL) gives what conversations
// FINAL gives at every step: turns read live before any summary, then
// summarized days, a batch of past days delivered again, a late turn into
// a summarized day, the summaries brought current again, and a merge. The
// writer's stale marks are what keeps the view exact between the viewer's
// refreshes.
func TestCostCellsExact(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	cfg, err := configure([]Option{WithLogger(discardLogger())}, Option.applyExporter)
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(dialDSN(dsn), cfg)
	defer w.shutdown(ctx)
	write := func(turns []schema.Turn) {
		t.Helper()
		if err := w.writeWait(ctx, item{turns: turns}); err != nil {
			t.Fatal(err)
		}
	}
	st := store.New(conn, 100, time.Minute)
	now := time.Now()
	today := uint64(now.UnixNano()) / schema.DayNS * schema.DayNS

	var calls []schema.Turn
	for day := range 4 { // three past days and today
		for i := range 5 {
			calls = append(calls, costCall(today-uint64(3-day)*schema.DayNS+uint64(i)*uint64(time.Minute), i))
		}
	}
	write(calls)
	checkCostCells(t, conn, "all read live")
	if len(currentDays(t, conn)) != 0 {
		t.Fatal("days current before any summary")
	}

	if err := st.SummarizeCost(ctx, now); err != nil {
		t.Fatal(err)
	}
	day := func(back uint64) uint32 { return uint32(today/schema.DayNS - back) }
	checkCurrent := func(when string, current, notCurrent []uint32) {
		t.Helper()
		got := map[uint32]bool{}
		for _, d := range currentDays(t, conn) {
			got[d] = true
		}
		for _, d := range current {
			if !got[d] {
				t.Errorf("%s: day %d not current", when, d)
			}
		}
		for _, d := range notCurrent {
			if got[d] {
				t.Errorf("%s: day %d current", when, d)
			}
		}
	}
	checkCurrent("after SummarizeCost", []uint32{day(3), day(2), day(1)}, []uint32{day(0)})
	checkCostCells(t, conn, "past days summarized")

	write(calls[5:10]) // the second day's batch again
	checkCurrent("after a re-delivery", []uint32{day(3), day(1)}, []uint32{day(2), day(0)})
	checkCostCells(t, conn, "a batch of a summarized day delivered again")

	write([]schema.Turn{costCall(today-3*schema.DayNS+uint64(time.Hour), 9)})
	checkCurrent("after a late turn", []uint32{day(1)}, []uint32{day(3), day(2), day(0)})
	checkCostCells(t, conn, "a late turn into a summarized day")

	if err := st.SummarizeCost(ctx, now); err != nil {
		t.Fatal(err)
	}
	checkCurrent("after the second SummarizeCost", []uint32{day(3), day(2), day(1)}, []uint32{day(0)})
	checkCostCells(t, conn, "summaries current again")

	if err := conn.Exec(ctx, "OPTIMIZE TABLE conversations FINAL"); err != nil {
		t.Fatal(err)
	}
	checkCostCells(t, conn, "after a merge")
}

// costCall is the response row of one priced call at startNS.
func costCall(startNS uint64, i int) schema.Turn {
	in, out, cost := uint32(100+i), uint32(10+i), 0.001*float64(i+1)
	span := fmt.Sprintf("%016x", startNS+uint64(i))
	return schema.Turn{
		TurnID: schema.ResponseTurnID(span, false), TraceID: span + span, SpanID: span,
		Project: "p", ThreadID: fmt.Sprintf("th-%d", i%2), Phase: []string{"plan", "review", "execute"}[i%3],
		Model: "gpt-5", Provider: "openai", Role: schema.RoleResponse, Seq: 1, Content: "ok",
		TokensIn: &in, TokensOut: &out, CostUSD: &cost, CostSource: schema.CostProvided,
		Status: schema.StatusOK, StartNS: startNS, DurationNS: uint64(time.Second),
	}
}

// currentDays lists the days whose summary the view reads.
func currentDays(t *testing.T, conn driver.Conn) []uint32 {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT day FROM cost_days GROUP BY day HAVING argMax(stale, computed_ns) = 0 ORDER BY day")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var days []uint32
	for rows.Next() {
		var d uint32
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		days = append(days, d)
	}
	return days
}

// checkCostCells compares the view's totals per day and phase with those of
// conversations FINAL.
func checkCostCells(t *testing.T, conn driver.Conn, when string) {
	t.Helper()
	read := func(query string) map[string][4]float64 {
		rows, err := conn.Query(context.Background(), query)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer rows.Close()
		got := map[string][4]float64{}
		for rows.Next() {
			var (
				day                 uint64
				phase               string
				calls, in, out, ok1 uint64
				cost                float64
			)
			if err := rows.Scan(&day, &phase, &calls, &in, &out, &cost, &ok1); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			got[fmt.Sprint(day, "/", phase)] = [4]float64{float64(calls), float64(in), float64(out), cost}
		}
		return got
	}
	view := read(`SELECT toUInt64(day), toString(phase), sum(calls), toUInt64(sum(tokens_in)), toUInt64(sum(tokens_out)),
       toFloat64(sum(cost_usd)), toUInt64(sum(unpriced)) FROM cost_cells GROUP BY day, phase`)
	final := read(`SELECT toUInt64(intDiv(start_ns, ` + schema.DaySQL + `)) AS d, toString(phase), count(),
       toUInt64(sum(tokens_in)), toUInt64(sum(tokens_out)), toFloat64(sum(cost_usd)), toUInt64(countIf(cost_source = 'unknown'))
FROM conversations FINAL WHERE cost_source != '' GROUP BY d, phase`)
	if len(view) != len(final) || len(final) == 0 {
		t.Errorf("%s: cost_cells has %d day/phase cells, conversations FINAL %d", when, len(view), len(final))
	}
	for k, f := range final {
		v := view[k]
		if v[0] != f[0] || v[1] != f[1] || v[2] != f[2] || math.Abs(v[3]-f[3]) > 1e-9 {
			t.Errorf("%s: %s: cost_cells %v, conversations FINAL %v", when, k, v, f)
		}
	}
}
