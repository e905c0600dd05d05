package viewer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
)

// A cost report over millions of turns cannot fold conversations FINAL on
// every request (seconds at 10M turns), so it reads whole UTC days from
// summaries: per day and project, the sums per model, provider, phase,
// speaker and agent (cost_daily) and per thread (cost_thread_daily).
//
// Summaries stay exact without the writers' help. Each day has a
// cheap fingerprint read from conversations without FINAL (row count, sum
// of start_ns); a summary is read only while the fingerprint it was
// computed for (kept in cost_days) equals the current one. Otherwise the day
// is recomputed from conversations FINAL under a new version, recorded with
// the fingerprint read BEFORE the recompute: rows that land meanwhile make
// it stale again at the next request, never wrongly fresh. A batch
// delivered twice raises the count until merged, a merge folding the copies
// lowers it: both recompute, and FINAL gives the same totals. convtrace
// reprice changes costs but not the fingerprint: it invalidates the days
// it repriced (pricing.Reprice).
//
// Today is always read live: it changes all the time, and recomputing it
// on every request would pile up versions. So are the partial days at the
// ends of a range that does not start or end at midnight UTC, so the
// report's range stays exact to the nanosecond.

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

// args are the bound arguments of selectCostCells and selectCostThreads
// (before the latter's limit).
func (p costPlan) args() []any {
	versions := p.versions
	if len(versions) == 0 {
		// An empty array literal has no element type on 18.16; "" is no
		// key.
		versions = []string{""}
	}
	args := []any{p.fromDay, p.toDay, p.project, p.project, versions}
	args = append(args, p.head.costArgs()...)
	return append(args, p.tail.costArgs()...)
}

// refreshCost makes the summaries of p's days current, recomputing the
// stale ones, and sets p.versions to the versions to read.
func (s Store) refreshCost(ctx context.Context, p *costPlan) error {
	if p.fromDay >= p.toDay {
		return nil
	}
	// Taken before the fingerprints are read: a reprice that invalidates
	// these days after its mutations finished has a later version and
	// wins over this recompute of old costs.
	version := nextVersion()
	g, gctx := errgroup.WithContext(ctx)
	var (
		fps    map[uint32]costFingerprint
		states map[uint32]costState
	)
	g.Go(func() (err error) {
		fps, err = s.costFingerprints(gctx, p.fromDay, p.toDay)
		return err
	})
	g.Go(func() (err error) {
		states, err = s.costStates(gctx, p.fromDay, p.toDay)
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	p.versions = p.versions[:0]
	var stale []uint32
	for d, fp := range fps {
		if st, ok := states[d]; ok && st.costFingerprint == fp {
			p.versions = append(p.versions, costVersion(d, st.version))
		} else {
			stale = append(stale, d)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	slices.Sort(stale)
	// One recompute per run of consecutive stale days: a cold range is
	// two scans, not two per day.
	for i := 0; i < len(stale); {
		j := i + 1
		for j < len(stale) && stale[j] == stale[j-1]+1 {
			j++
		}
		keys, err := s.recomputeDays(ctx, stale[i:j], fps, version)
		if err != nil {
			return err
		}
		p.versions = append(p.versions, keys...)
		i = j
	}
	return nil
}

// recomputeDays makes the summaries of run, consecutive stale days with
// fingerprints fps, current as version and returns the costVersion keys
// to read them by. Concurrent requests for the same days share one
// recompute (seconds of FINAL scans on a cold range); a request that
// found the days stale just before another's recompute ended finds them
// current when it checks again, and reads that version.
func (s Store) recomputeDays(ctx context.Context, run []uint32, fps map[uint32]costFingerprint, version uint64) ([]string, error) {
	from, to := run[0], run[len(run)-1]+1
	recompute := func() ([]string, error) {
		states, err := s.costStates(ctx, from, to)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(run))
		for _, d := range run {
			if st, ok := states[d]; ok && st.costFingerprint == fps[d] {
				keys = append(keys, costVersion(d, st.version))
			}
		}
		if len(keys) == len(run) {
			return keys, nil
		}
		if err := s.recomputeCost(ctx, from, to, version); err != nil {
			return nil, err
		}
		// The states go last: a reader that finds a version finds all
		// its rows.
		if err := s.insertCostStates(ctx, run, fps, version); err != nil {
			return nil, err
		}
		keys = keys[:0]
		for _, d := range run {
			keys = append(keys, costVersion(d, version))
		}
		return keys, nil
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
