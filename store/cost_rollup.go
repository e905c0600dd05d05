package store

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// A cost report reads whole past UTC days from summaries (cost_daily, per
// day and project; cost_thread_daily, per thread), current until a write or
// a new part marks a day stale, and the rest live: today, and the partial
// days at the ends of its range. docs/design/summaries.md says why they
// stay exact.

// costPlan is how one report reads its range: summarized days, live head
// and tail.
type costPlan struct {
	project        string
	fromDay, toDay uint32     // days [fromDay, toDay) read from the summaries; none when equal
	head, tail     CostFilter // read live; the zero range reads nothing
	versions       []string   // costVersion keys of the summarized days
}

// planCost splits f into whole days before now's UTC day, read from the
// summaries, and the live rest.
func planCost(f CostFilter, now time.Time) costPlan {
	to := f.ToNS
	if to == 0 {
		to = math.MaxUint64
	}
	first := (f.FromNS + schema.DayNS - 1) / schema.DayNS
	last := min(to/schema.DayNS, uint64(now.UnixNano())/schema.DayNS)
	var head, tail CostFilter
	head.Project, tail.Project = f.Project, f.Project
	p := costPlan{project: f.Project}
	if first >= last {
		head.FromNS, head.ToNS = f.FromNS, to
	} else {
		p.fromDay, p.toDay = uint32(first), uint32(last)
		if f.FromNS < first*schema.DayNS {
			head.FromNS, head.ToNS = f.FromNS, first*schema.DayNS
		}
		if last*schema.DayNS < to {
			tail.FromNS, tail.ToNS = last*schema.DayNS, to
		}
	}
	p.head, p.tail = head, tail
	return p
}

// costVersion is the key costVersionWhere matches a summary row against.
func costVersion(day uint32, version uint64) string {
	return fmt.Sprintf("%d/%d", day, version)
}

// refreshCost makes the summaries of p's days current, recomputing the
// stale ones, and sets p.versions to the versions to read.
func (s Store) refreshCost(ctx context.Context, p *costPlan) error {
	if p.fromDay >= p.toDay {
		return nil
	}
	if err := s.catchUp(ctx, "cost", s.invalidateAllCost, s.invalidateTouchedCost); err != nil {
		return err
	}
	// Taken before the states are read: a mark that lands after has a
	// later version and wins over this recompute.
	version := nextVersion()
	states, err := s.costStates(ctx, p.fromDay, p.toDay)
	if err != nil {
		return err
	}
	p.versions = p.versions[:0]
	var stale []uint32
	for d := p.fromDay; d < p.toDay; d++ {
		if st, ok := states[d]; ok && !st.stale {
			p.versions = append(p.versions, costVersion(d, st.version))
		} else {
			stale = append(stale, d)
		}
	}
	// One recompute per run of consecutive stale days: a cold range is
	// two scans, not two per day.
	for i := 0; i < len(stale); {
		j := i + 1
		for j < len(stale) && stale[j] == stale[j-1]+1 {
			j++
		}
		keys, err := s.recomputeDays(ctx, stale[i:j], version)
		if err != nil {
			return err
		}
		p.versions = append(p.versions, keys...)
		i = j
	}
	return nil
}

// recomputeDays makes the summaries of run, consecutive stale days,
// current as version and returns the costVersion keys to read them by.
// Concurrent requests for the same days share one recompute (seconds of
// FINAL scans on a cold range); a request that found the days stale just
// before another's recompute ended finds them current when it checks
// again, and reads that version.
func (s Store) recomputeDays(ctx context.Context, run []uint32, version uint64) ([]string, error) {
	from, to := run[0], run[len(run)-1]+1
	recompute := func() ([]string, error) {
		states, err := s.costStates(ctx, from, to)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(run))
		for _, d := range run {
			if st, ok := states[d]; ok && !st.stale {
				keys = append(keys, costVersion(d, st.version))
			}
		}
		if len(keys) == len(run) {
			return keys, nil
		}
		return s.recomputeRun(ctx, run, version)
	}
	if s.flights == nil {
		return recompute()
	}
	keys, err, _ := s.flights.Do(fmt.Sprintf("cost days %d-%d", from, to), func() (any, error) { return recompute() })
	if err != nil {
		return nil, err
	}
	return keys.([]string), nil
}

// invalidateTouchedCost marks stale the days that rows of parts fall on.
func (s Store) invalidateTouchedCost(ctx context.Context, parts []part) error {
	version := nextVersion()
	return eachSource(parts, func(src *partSource, names []string) error {
		q := sqlf(invalidateTouchedDays, holes{"version": arg(version), "table": raw(src.table), "parts": arg(ddl.Tuple(names))})
		if err := q.exec(ctx, src.db); err != nil {
			return fmt.Errorf("mark cost summaries of new parts stale%s: %w", src.on(), err)
		}
		return nil
	})
}

// invalidateAllCost marks every day stale, when there is no telling what
// changed.
func (s Store) invalidateAllCost(ctx context.Context) error {
	_, err := Begin(ctx, s.db, Change{})
	return err
}

// CostData returns the cells (when withCells) and at most threadLimit of
// the most expensive threads of f's range, refreshing the summaries it
// reads. A caller that needs one of the two does not pay for the other.
func (s Store) CostData(ctx context.Context, f CostFilter, withCells bool, threadLimit int, now time.Time) ([]CostCell, []CostThread, error) {
	p := planCost(f, now)
	if err := s.refreshCost(ctx, &p); err != nil {
		return nil, nil, err
	}
	// The two reads are independent: run them side by side, so that the
	// report waits for the longer, not for both.
	g, gctx := errgroup.WithContext(ctx)
	var (
		cells   []CostCell
		threads []CostThread
	)
	if withCells {
		g.Go(func() (err error) {
			cells, err = s.costCells(gctx, p)
			return err
		})
	}
	if threadLimit > 0 {
		g.Go(func() (err error) {
			threads, err = s.costThreads(gctx, p, threadLimit)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return cells, threads, nil
}

// versionClock hands out summary versions that increase strictly within
// the process, even when two recomputes share a clock reading.
var versionClock struct {
	sync.Mutex
	last uint64
}

// nextVersion returns a version newer than the last one handed out: the
// clock in Unix nanoseconds, or one past the last.
func nextVersion() uint64 {
	versionClock.Lock()
	defer versionClock.Unlock()
	versionClock.last = max(uint64(time.Now().UnixNano()), versionClock.last+1)
	return versionClock.last
}

// The statements of the cost summaries' states.
const (
	// selectCostStates returns the current version of each summarized day
	// and whether it is stale.
	selectCostStates = `
SELECT day, argMax(stale, computed_ns) AS st_stale, max(computed_ns) AS version
FROM cost_days
WHERE day >= ? AND day < ?
GROUP BY day
ORDER BY day`

	// invalidateTouchedDays marks stale, as {version}, the days rows of
	// some {parts} of {table} fall on.
	invalidateTouchedDays = `
INSERT INTO cost_days (day, stale, computed_ns)
SELECT DISTINCT toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)), toUInt8(1), toUInt64({version})
FROM {table}
WHERE _part IN {parts}`

	// insertCostStates makes a version current for some days, passed as
	// an array: INSERT … VALUES with bound arguments hangs over the native
	// protocol.
	insertCostStates = `
INSERT INTO cost_days (day, stale, computed_ns)
SELECT arrayJoin(?) AS d, toUInt8(0), toUInt64(?)`
)

// costState is a day's current version and whether it is stale.
type costState struct {
	version uint64
	stale   bool
}

// costStates returns the current version of every summarized day of
// [fromDay, toDay).
func (s Store) costStates(ctx context.Context, fromDay, toDay uint32) (map[uint32]costState, error) {
	rows, err := s.db.Query(ctx, selectCostStates, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("query cost summary states: %w", err)
	}
	defer rows.Close()
	states := map[uint32]costState{}
	for rows.Next() {
		var (
			day   uint32
			stale uint8
			st    costState
		)
		if err := rows.Scan(&day, &stale, &st.version); err != nil {
			return nil, fmt.Errorf("scan cost summary state: %w", err)
		}
		st.stale = stale != 0
		states[day] = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cost summary states: %w", err)
	}
	return states, nil
}

// SummarizeCost makes the cost summaries of every past day current: what
// serve does in the background, so that the cost_cells view (and the next
// report) reads summaries rather than turns. The days start with the first
// month partition of conversations.
func (s Store) SummarizeCost(ctx context.Context, now time.Time) error {
	srcs, err := s.partSources(ctx)
	if err != nil {
		return err
	}
	parts, err := listParts(ctx, srcs)
	if err != nil {
		return err
	}
	var first time.Time
	for _, p := range parts {
		month, err := time.Parse("200601", p.partition)
		if err != nil {
			return fmt.Errorf("partition %q of conversations is not a month: %w", p.partition, err)
		}
		if first.IsZero() || month.Before(first) {
			first = month
		}
	}
	if first.IsZero() {
		return nil // no turns yet
	}
	p := planCost(CostFilter{FromNS: uint64(first.UnixNano()), ToNS: uint64(now.UnixNano())}, now)
	return s.refreshCost(ctx, &p)
}
