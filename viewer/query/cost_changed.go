package query

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// invalidateCostDays marks the cost summaries of some days stale: a state
// with turns = 0, which is no day's fingerprint (refreshCost), so the next
// report recomputes them. A summary covers every project of its day, so a
// change in one project invalidates whole days.
const invalidateCostDays = `
INSERT INTO cost_days (day, turns, start_sum, computed_ns)
SELECT day, toUInt64(0), toUInt64(0), toUInt64(?)
FROM cost_days
WHERE day >= ? AND day <= ?
GROUP BY day`

// CostsChanged marks the cost summaries of the turns that started in
// [fromNS, toNS) stale (toNS 0: no end), for a change their fingerprint
// does not see: costs rewritten in place (pricing.Reprice) leave the row
// count and start times as they were. Call it once the change is done: its
// version, read from the clock now, is newer than that of any summary
// computed from the old costs, which began before.
func CostsChanged(ctx context.Context, db DB, fromNS, toNS uint64) error {
	if toNS == 0 {
		toNS = math.MaxUint64
	}
	lastDay := min((toNS-1)/schema.DayNS, math.MaxUint32)
	err := db.Exec(ctx, invalidateCostDays, uint64(time.Now().UnixNano()), uint32(fromNS/schema.DayNS), uint32(lastDay))
	if err != nil {
		return fmt.Errorf("invalidate cost summaries: %w", err)
	}
	return nil
}
