package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
)

// The statement that invalidates the viewer's cost summaries runs on a
// modern server (chDB 26.x) too: the days of the range get a newer, stale
// state, the days outside keep theirs.
func TestInvalidateCostDaysOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, stmts := chdbcheck.Schema(ctx, t)
	stmts = append(stmts,
		"INSERT INTO cost_days (day, stale, computed_ns) VALUES (10, 0, 100), (11, 0, 100), (12, 0, 100)")
	stmts = append(stmts, inline(t, markDayRange, 200, 11, 12))
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{
		Statements: stmts,
		Queries:    []string{"SELECT day, argMax(stale, computed_ns) AS stale FROM cost_days GROUP BY day ORDER BY day"},
	})
	chdbcheck.SkipOrFail(t, err)
	if got, want := fmt.Sprint(out.Results[0].Rows), "[map[day:10 stale:0] map[day:11 stale:1] map[day:12 stale:1]]"; got != want {
		t.Errorf("cost_days after invalidating days 11..12 on chDB %s:\n got %s\nwant %s", out.Version, got, want)
	}
}
