package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// Every write to stored turns — the collector's writer, import, deletion,
// prune, archive, reprice — goes through Begin and Done, which keep the
// summaries exact for every reader, SQL over cost_cells included:
// docs/design/summaries.md says why marks go before and after.

// A Change is what a write does to stored turns, as the summaries must
// learn it.
type Change struct {
	// Days are the UTC days (start_ns / schema.DayNS) of the turns
	// written, when the writer knows them; otherwise the turns' start
	// times are in [FromNS, ToNS) (ToNS 0: no end).
	Days         []uint32
	FromNS, ToNS uint64
	// InPlace says rows are rewritten in place, which the summaries'
	// change detection does not see (a mutation keeps its parts' block
	// ranges): Done recomputes the summaries of the threads of Project
	// ("" every project) with turns in [FromNS, ToNS).
	InPlace bool
	Project string
}

// A Write is a change under way; Done ends it.
type Write struct {
	db DB
	c  Change
}

// Begin marks the cost summaries of c's days stale before the write: a
// reader meanwhile reads those days live.
func Begin(ctx context.Context, db DB, c Change) (Write, error) {
	w := Write{db: db, c: c}
	return w, w.markDays(ctx)
}

// Done marks c's days stale again once the write is stored, so that a
// summary computed while it was under way is outdated, and recomputes the
// thread summaries an in-place change touched.
func (w Write) Done(ctx context.Context) error {
	if err := w.markDays(ctx); err != nil {
		return err
	}
	if !w.c.InPlace {
		return nil
	}
	to := w.c.ToNS
	if to == 0 {
		to = math.MaxUint64
	}
	return Store{db: w.db}.recomputeThreads(ctx, selectThreadsStarted, w.c.FromNS, to, w.c.Project, w.c.Project)
}

// The statements of Begin and Done. A mark is a row of cost_days with
// stale = 1 and a version newer than the summary it outdates.
const (
	// markDays marks {days}, an array, stale in {table} (cost_days or
	// latency_days) as {version}. INSERT … SELECT: INSERT … VALUES with
	// bound arguments hangs over the native protocol on 18.16.
	markDays = `
INSERT INTO {table} (day, stale, computed_ns)
SELECT arrayJoin({days}) AS d, toUInt8(1), toUInt64({version})`

	// markDayRange marks stale the summarized days of [?, ?]: a day
	// without a summary needs no mark. Arguments: the version, the
	// first day, the last. A summary covers every project of its day.
	markDayRange = `
INSERT INTO cost_days (day, stale, computed_ns)
SELECT day, toUInt8(1), toUInt64(?)
FROM cost_days
WHERE day >= ? AND day <= ?
GROUP BY day`

	// markLatencyDayRange is markDayRange for the latency summaries.
	markLatencyDayRange = `
INSERT INTO latency_days (day, stale, computed_ns)
SELECT day, toUInt8(1), toUInt64(?)
FROM latency_days
WHERE day >= ? AND day <= ?
GROUP BY day`

	// selectThreadsStarted reads the threads of a project ('' every one)
	// with turns that started in [?, ?).
	selectThreadsStarted = `
SELECT DISTINCT project, thread_id
FROM conversations
WHERE start_ns >= ? AND start_ns < ? AND (? = '' OR project = ?)`
)

// markDays marks the cost and latency summaries of the change's days
// stale.
func (w Write) markDays(ctx context.Context) error {
	version := nextVersion()
	for _, days := range []struct{ table, inRange string }{{"cost_days", markDayRange}, {"latency_days", markLatencyDayRange}} {
		var err error
		switch {
		case len(w.c.Days) > 0:
			err = sqlf(markDays, holes{"table": raw(days.table), "days": arg(w.c.Days), "version": arg(version)}).exec(ctx, w.db)
		case w.c.Days == nil:
			last := uint64(math.MaxUint32)
			if w.c.ToNS != 0 {
				last = min((w.c.ToNS-1)/schema.DayNS, last)
			}
			err = w.db.Exec(ctx, days.inRange, version, uint32(w.c.FromNS/schema.DayNS), uint32(last))
		}
		if err != nil {
			return fmt.Errorf("mark the summaries of %s stale: %w", days.table, err)
		}
	}
	return nil
}

// midnightMargin is how long after midnight UTC a writer marks today too:
// another clock may already call it yesterday.
const midnightMargin = 10 * time.Minute

// summarizedDays returns the days, in order and each once, of the turns
// in sets that a cost summary may hold by now: today is never summarized,
// but just after midnight. Not nil: a write of no such day marks none.
func summarizedDays(sets [][]schema.Turn, now time.Time) []uint32 {
	today := uint64(now.UnixNano()) / schema.DayNS
	if uint64(now.UnixNano())%schema.DayNS < uint64(midnightMargin) {
		today++
	}
	days := []uint32{}
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
