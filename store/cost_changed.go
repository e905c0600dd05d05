package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// invalidateCostDays marks the cost summaries of the days [?, ?] stale, so
// that the next report recomputes them. Argument order: the version, the
// first day, the last. A summary covers every project of its day, so a
// change in one project invalidates whole days.
const invalidateCostDays = `
INSERT INTO cost_days (day, stale, computed_ns)
SELECT day, toUInt8(1), toUInt64(?)
FROM cost_days
WHERE day >= ? AND day <= ?
GROUP BY day`

// selectThreadsStarted reads the threads with turns that started in
// [?, ?).
const selectThreadsStarted = `
SELECT DISTINCT project, thread_id
FROM conversations
WHERE start_ns >= ? AND start_ns < ?`

// CostsChanged brings the summaries of the turns that started in
// [fromNS, toNS) (toNS 0: no end) up to date after a change nothing else
// sees: costs rewritten in place (pricing.Reprice) leave the row count,
// the start times and the parts' block ranges as they were. It marks the
// cost summaries of those days stale and recomputes the thread summaries
// of the threads with turns then. Call it once the change is done: the
// version it writes, read from the clock now, is newer than that of any
// summary computed from the old costs, which began before.
func CostsChanged(ctx context.Context, db DB, fromNS, toNS uint64) error {
	if toNS == 0 {
		toNS = math.MaxUint64
	}
	lastDay := min((toNS-1)/schema.DayNS, math.MaxUint32)
	err := db.Exec(ctx, invalidateCostDays, uint64(time.Now().UnixNano()), uint32(fromNS/schema.DayNS), uint32(lastDay))
	if err != nil {
		return fmt.Errorf("invalidate cost summaries: %w", err)
	}
	return Store{db: db}.recomputeThreads(ctx, selectThreadsStarted, fromNS, toNS)
}
