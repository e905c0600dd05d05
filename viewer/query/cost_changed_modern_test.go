package query

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
)

// The statement that invalidates the viewer's cost summaries runs on a
// modern server (chDB 26.x) too: the days of the range get a newer state
// with no fingerprint, the days outside keep theirs.
func TestInvalidateCostDaysOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, stmts := chdbcheck.Schema(ctx, t)
	stmts = append(stmts,
		"INSERT INTO cost_days (day, turns, start_sum, computed_ns) VALUES (10, 5, 50, 100), (11, 6, 60, 100), (12, 7, 70, 100)")
	stmts = append(stmts, inline(t, invalidateCostDays, 200, 11, 12))
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{
		Statements: stmts,
		Queries:    []string{"SELECT day, argMax(turns, computed_ns) AS turns FROM cost_days GROUP BY day ORDER BY day"},
	})
	chdbcheck.SkipOrFail(t, err)
	if got, want := fmt.Sprint(out.Results[0].Rows), "[map[day:10 turns:5] map[day:11 turns:0] map[day:12 turns:0]]"; got != want {
		t.Errorf("cost_days after invalidating days 11..12 on chDB %s:\n got %s\nwant %s", out.Version, got, want)
	}
}
