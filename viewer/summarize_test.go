package viewer_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// What serve runs in the background brings the cost summaries of past days
// current without anyone asking for a report, keeps at it, and returns
// when its context ends.
func TestKeepSummarized(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	yesterday := uint64(time.Now().Add(-24*time.Hour).UnixNano()) / schema.DayNS
	cost := 0.25
	call := func(id string, startNS uint64) schema.Turn {
		return schema.Turn{TurnID: id, SpanID: id, Project: "p", ThreadID: "th", Role: schema.RoleResponse,
			Model: "m", CostUSD: &cost, CostSource: schema.CostProvided, Status: schema.StatusOK, StartNS: startNS}
	}
	testkit.InsertTurns(t, conn, call("a", yesterday*schema.DayNS+1))

	current := func() bool {
		var n uint64
		err := conn.QueryRow(ctx, `SELECT count() FROM (SELECT day FROM cost_days GROUP BY day HAVING argMax(stale, computed_ns) = 0 AND day = ?)`,
			uint32(yesterday)).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	run, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).KeepSummarized(run, 50*time.Millisecond)
		close(done)
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s", what)
			}
		}
	}
	waitFor("yesterday's summary current", current)

	// A late turn into yesterday makes it stale (the viewer sees its part
	// at the next round) and the next round current again, with the turn.
	testkit.InsertTurns(t, conn, call("b", yesterday*schema.DayNS+2))
	waitFor("yesterday summarized with the late turn", func() bool {
		var calls uint64
		err := conn.QueryRow(ctx, `SELECT sum(calls) FROM cost_cells WHERE day = ?`, uint32(yesterday)).Scan(&calls)
		return err == nil && calls == 2 && current()
	})

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("KeepSummarized did not return after its context ended")
	}
}
