package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// The latency report read from day summaries equals the report read live,
// over whole and partial days, through calls that cross midnight with an
// error turn before it, a late call into summarized days, a batch stored
// again, a deleted thread and a prune; and a warm report of whole days
// reads a fraction of the rows.
func TestLatencySummariesExact(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, time.Minute)
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(26, 5))
	// call returns the rows of a call ending at end: its prompt, an error
	// turn just after the prompt when midError, and its end.
	call := func(span string, end, duration uint64, midError bool) []schema.Turn {
		c := latencyCall{model: []string{"gpt-5", "qwen3"}[r.IntN(2)], phase: []string{"plan", "verify"}[r.IntN(2)],
			speaker: "planner", duration: duration, ttft: uint64(r.IntN(2)) * duration / 3, failed: r.IntN(8) == 0}
		turns := latencyTurns(span, end, c, midError, 1+r.IntN(2))
		if midError {
			turns[1].StartNS = end - duration + 1
		}
		return turns
	}
	var batch []schema.Turn
	for i := range 300 {
		end := uint64(day.Add(time.Duration(r.Int64N(int64(72 * time.Hour)))).UnixNano())
		span := fmt.Sprintf("%c%04d", 'a'+rune(i%3), i)
		batch = append(batch, call(span, end, uint64(r.IntN(40_000)+1)*uint64(time.Millisecond), r.IntN(6) == 0)...)
	}
	// Calls across each midnight with an error turn before it.
	for _, d := range []int{1, 2} {
		midnight := uint64(day.AddDate(0, 0, d).UnixNano())
		batch = append(batch, call(fmt.Sprintf("m%04d", d), midnight+uint64(time.Second), uint64(time.Minute), true)...)
	}
	testkit.InsertTurns(t, conn, batch...)

	var total uint64
	same := func(step string) {
		t.Helper()
		ranges := []struct{ from, to time.Time }{
			{day, day.AddDate(0, 0, 3)},
			{day.Add(90 * time.Minute), day.AddDate(0, 0, 2).Add(5 * time.Hour)},
			{day.AddDate(0, 0, 1), day.AddDate(0, 0, 2)},
		}
		for _, rg := range ranges {
			for _, f := range []LatencyFilter{{}, {Model: "qwen3", Phase: "plan"}} {
				f.FromNS, f.ToNS = uint64(rg.from.UnixNano()), uint64(rg.to.UnixNano())
				var read atomic.Uint64
				counted := clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { read.Add(p.Rows) }))
				gotAll, got, err := s.Latency(counted, f, nil)
				if err != nil {
					t.Fatal(err)
				}
				wantAll, want, err := s.latency(ctx, liveLatency(f), f, LatencyDimensions)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(gotAll, got) != fmt.Sprint(wantAll, want) {
					t.Errorf("%s, %s to %s, %+v:\n summarized %v %v\n       live %v %v", step, rg.from, rg.to, f, gotAll, got, wantAll, want)
				}
				if rg.from.Equal(day) && rg.to.Equal(day.AddDate(0, 0, 3)) && f.Model == "" {
					total = read.Load()
				}
			}
		}
	}
	same("first")
	same("warm")
	var rows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM conversations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if total*2 > rows {
		t.Errorf("a warm report of whole days read %d rows, more than half of the %d turns", total, rows)
	}

	// A call whose error turn falls on the first day and whose end on the
	// second, stored after both were summarized, then a batch again.
	testkit.InsertTurns(t, conn, call("late", uint64(day.AddDate(0, 0, 1).Add(time.Minute).UnixNano()), uint64(10*time.Minute), true)...)
	same("late call")
	testkit.InsertTurns(t, conn, batch[:100]...)
	same("batch again")

	if _, err := s.DeleteThread(ctx, "th-a", nil); err != nil {
		t.Fatal(err)
	}
	same("thread deleted")
	if _, err := s.Prune(ctx, PruneScope{BeforeNS: uint64(day.Add(30 * time.Hour).UnixNano())}, nil); err != nil {
		t.Fatal(err)
	}
	same("pruned")
	for _, table := range []string{"latency_crossing", "latency_errors"} {
		if days := testkit.Strings(t, conn, "SELECT DISTINCT toString(day) FROM "+table); len(days) == 0 {
			t.Errorf("%s is empty: no call crossed midnight with an error turn", table)
		}
	}
}
