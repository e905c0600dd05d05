package collector

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// The cost summaries (store/cost_rollup.go) hold whole past UTC
// days; a day is current in cost_days until something marks it stale. The
// viewer marks the days of the parts it has not seen yet before it reads,
// but SQL that reads the summaries directly (the cost_cells view, ddl/sql/
// 0015_cost_cells.sql) cannot, so the writer marks them too: the past days
// a batch's turns fall on are marked stale before the turns are inserted,
// and again after, so that a recompute that read conversations before the
// turns were there is outdated by a newer mark. Turns of today need no
// mark, today being never summarized, except just after midnight, when
// another clock may already call it yesterday.

// insertStaleDays marks days stale; a version is its time in Unix
// nanoseconds, as the viewer's are.
const insertStaleDays = "INSERT INTO cost_days (day, stale, computed_ns)"

// midnightMargin is how long after midnight UTC the writer marks today
// too.
const midnightMargin = 10 * time.Minute

// summarizedDays returns the days, in order and each once, of the turns in
// sets that a cost summary may hold by now.
func summarizedDays(sets [][]schema.Turn, now time.Time) []uint32 {
	today := uint64(now.UnixNano()) / schema.DayNS
	if uint64(now.UnixNano())%schema.DayNS < uint64(midnightMargin) {
		today++
	}
	var days []uint32
	for _, set := range sets {
		for i := range set {
			if d := set[i].StartNS / schema.DayNS; d < today && !slices.Contains(days, uint32(d)) {
				days = append(days, uint32(d))
			}
		}
	}
	slices.Sort(days)
	return days
}

// markStale marks days stale in the cost summaries.
func markStale(ctx context.Context, conn BatchConn, days []uint32) error {
	if len(days) == 0 {
		return nil
	}
	version := uint64(time.Now().UnixNano())
	rows := make([][3]any, len(days))
	for i, d := range days {
		rows[i] = [3]any{d, uint8(1), version}
	}
	if err := insertRows(ctx, conn, insertStaleDays, func(r *[3]any) []any { return r[:] }, rows); err != nil {
		return fmt.Errorf("mark cost days stale: %w", err)
	}
	return nil
}
