package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
)

// Recomputing the cost summaries of days: summed as they are, the days
// with copies again folded under a newer version, the states written last
// (docs/design/summaries.md, "The cost summaries").
const (
	// costDayCond is the calls of some whole days [?, ?) of every project,
	// of those whose numbers the array ? lists.
	costDayCond = `
WHERE ts >= toDateTime(?) AND ts < toDateTime(?)
  AND start_ns >= ? AND start_ns < ?
  AND ` + providerCall

	costDayIn = `
  AND has(?, toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)))`

	// selectCopyDays lists the days some of whose calls had copies when a
	// version summarized them as they are: its threads' rows count more
	// rows than turns (insertCostThreadDaily's copies).
	selectCopyDays = `
SELECT DISTINCT day
FROM cost_thread_daily
WHERE computed_ns = ? AND copies > 0`

	// insertCostDaily and insertCostThreadDaily recompute the summaries of
	// days server-side, no row crossing the network, from the %s: the
	// table as it is or FINAL.
	insertCostDaily = `
INSERT INTO cost_daily (project, day, computed_ns, model, provider, phase, speaker, agent,
    calls, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, unpriced)` + selectCostDaily

	selectCostDaily = `
SELECT project, toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)) AS cell_day, toUInt64(?) AS version,
       model, provider, phase, speaker, agent,` + costUsageColumns + `
FROM %s` + costDayCond + costDayIn + `
GROUP BY project, cell_day, model, provider, phase, speaker, agent`

	insertCostThreadDaily = `
INSERT INTO cost_thread_daily (project, day, computed_ns, thread_id,
    calls, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, unpriced, copies)
SELECT project, toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)) AS cell_day, toUInt64(?) AS version, thread_id,` +
		costUsageColumns + `,
        count() - uniqExact(turn_id) AS thread_copies
FROM %s` + costDayCond + costDayIn + `
GROUP BY project, cell_day, thread_id`

	asTheyAre = "conversations"
	folded    = "conversations FINAL"
)

// recomputeRun recomputes the summaries of run, consecutive days, as
// version (the days with copies as a newer one), records their states and
// returns the costVersion keys to read them by.
func (s Store) recomputeRun(ctx context.Context, run []uint32, version uint64) ([]string, error) {
	from, to := run[0], run[len(run)-1]+1
	srcs, err := s.partSources(ctx)
	if err != nil {
		return nil, err
	}
	before, err := listParts(ctx, srcs)
	if err != nil {
		return nil, err
	}
	if err := s.recomputeCost(ctx, from, to, run, nil, version); err != nil {
		return nil, err
	}
	copies, err := s.copyDays(ctx, version)
	if err != nil {
		return nil, err
	}
	after, err := listParts(ctx, srcs)
	if err != nil {
		return nil, err
	}
	if arrived(before, after, run) {
		for _, d := range run {
			copies[d] = true
		}
	}
	versions := map[uint64][]uint32{}
	var copied []uint32
	for _, d := range run {
		if copies[d] {
			copied = append(copied, d)
		} else {
			versions[version] = append(versions[version], d)
		}
	}
	if len(copied) > 0 {
		newer := nextVersion()
		if err := s.recomputeCost(ctx, from, to, nil, copied, newer); err != nil {
			return nil, err
		}
		versions[newer] = copied
	}
	// The states go last: a reader that finds a version finds all its
	// rows.
	var keys []string
	for v, days := range versions {
		if err := s.db.Exec(ctx, insertCostStates, days, v); err != nil {
			return nil, fmt.Errorf("record cost summary versions: %w", err)
		}
		for _, d := range days {
			keys = append(keys, costVersion(d, v))
		}
	}
	return keys, nil
}

// arrived reports whether a part of the months of days is in after and
// holds blocks none of before held: rows inserted in between.
func arrived(before, after []part, days []uint32) bool {
	months := map[string]bool{}
	for _, d := range days {
		months[strconv.FormatUint(uint64(monthOf(uint64(d)*schema.DayNS)), 10)] = true
	}
	seen := extend(seenParts{}, before, nil)
	for _, p := range after {
		if months[p.partition] && !seen.covers(p) {
			return true
		}
	}
	return false
}

// copyDays returns the days some of whose calls had copies when version
// summarized them as they are.
func (s Store) copyDays(ctx context.Context, version uint64) (map[uint32]bool, error) {
	rows, err := s.db.Query(ctx, selectCopyDays, version)
	if err != nil {
		return nil, fmt.Errorf("query days with copies: %w", err)
	}
	defer rows.Close()
	days := map[uint32]bool{}
	for rows.Next() {
		var d uint32
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("scan day with copies: %w", err)
		}
		days[d] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read days with copies: %w", err)
	}
	return days, nil
}

// dayArgs are the arguments of costDayCond for the days [fromDay, toDay):
// the ts partition column first, then exactly start_ns.
func dayArgs(fromDay, toDay uint32) []any {
	from, to := uint64(fromDay)*schema.DayNS, uint64(toDay)*schema.DayNS
	return []any{from / uint64(time.Second), to / uint64(time.Second), from, to}
}

// recomputeCost writes version of the summaries of the days plain, from
// the rows as they are, and copied, folding copies, all within [fromDay,
// toDay). Its scans run side by side, on the server's cores.
func (s Store) recomputeCost(ctx context.Context, fromDay, toDay uint32, plain, copied []uint32, version uint64) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, set := range []struct {
		days []uint32
		from string
	}{{plain, asTheyAre}, {copied, folded}} {
		if len(set.days) == 0 {
			continue
		}
		args := append(append([]any{version}, dayArgs(fromDay, toDay)...), set.days)
		for _, insert := range []string{insertCostDaily, insertCostThreadDaily} {
			g.Go(func() error {
				if err := s.db.Exec(gctx, fmt.Sprintf(insert, set.from), args...); err != nil {
					return fmt.Errorf("summarize cost of days %d..%d: %w", fromDay, toDay, err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}
