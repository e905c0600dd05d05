package store

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// Latency day summaries (migration 0023), made stale and recomputed as the
// cost days are; exact because a call's rows lie between its start (its end
// less its duration) and its end.

// The statements of the latency summaries.
const (
	// latencyPieces folds by day and span the call rows of the {days} (an
	// array) in [{from}, {to}), ts first ({from_sec}, {to_sec}); whole: the
	// call started then.
	latencyPieces = `
(
    SELECT any(project) AS piece_project, toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)) AS piece_day,
           trace_id, span_id, any(thread_id) AS piece_thread,
           any(model) AS piece_model, any(provider) AS piece_provider, any(phase) AS piece_phase, any(speaker) AS piece_speaker,
           toUInt8(countIf(cost_source != '') > 0) AS piece_ends,
           maxIf(duration_ns, cost_source != '') AS piece_duration,
           max(ttft_ns) AS piece_ttft,
           max(toUInt8(role = 'error' OR status = 'error')) AS piece_failed,
           toUInt8(maxIf(start_ns, cost_source != '') >= piece_day * ` + schema.DaySQL + ` + piece_duration) AS piece_whole
    FROM conversations
    PREWHERE ts >= toDateTime({from_sec}) AND ts < toDateTime({to_sec}) AND start_ns >= {from} AND start_ns < {to}
    WHERE (cost_source != '' OR role = 'error' OR status = 'error')
      AND has({days}, toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)))
    GROUP BY piece_day, trace_id, span_id
)`

	// insertLatencyDaily adds up the whole calls of the {pieces}
	// (latencyPieces) per cell as {version}.
	insertLatencyDaily = `
INSERT INTO latency_daily (project, day, computed_ns, model, provider, phase, speaker, calls, failed, duration, ttft_calls, ttft)
SELECT piece_project, piece_day, toUInt64({version}), piece_model, piece_provider, piece_phase, piece_speaker,
       count(), sum(piece_failed), quantilesExactState(0.5, 0.95, 0.99)(piece_duration),
       countIf(piece_ttft > 0), quantilesExactIfState(0.5, 0.95, 0.99)(piece_ttft, piece_ttft > 0)
FROM {pieces}
WHERE piece_ends AND piece_whole
GROUP BY piece_project, piece_day, piece_model, piece_provider, piece_phase, piece_speaker`

	// insertLatencyCrossing keeps the calls of the {pieces} that started
	// before their day as {version}.
	insertLatencyCrossing = `
INSERT INTO latency_crossing (project, day, computed_ns, thread_id, trace_id, span_id, model, provider, phase, speaker,
    duration_ns, ttft_ns, failed)
SELECT piece_project, piece_day, toUInt64({version}), piece_thread, trace_id, span_id, piece_model, piece_provider, piece_phase,
       piece_speaker, piece_duration, piece_ttft, piece_failed
FROM {pieces}
WHERE piece_ends AND NOT piece_whole`

	// insertLatencyErrors keeps the {pieces} that end no call, all error
	// rows, as {version}.
	insertLatencyErrors = `
INSERT INTO latency_errors (project, day, computed_ns, thread_id, trace_id, span_id, model, provider, phase, speaker, ttft_ns)
SELECT piece_project, piece_day, toUInt64({version}), piece_thread, trace_id, span_id, piece_model, piece_provider, piece_phase,
       piece_speaker, piece_ttft
FROM {pieces}
WHERE NOT piece_ends`

	// selectLatencyStates returns the current version of each summarized
	// day of [?, ?) and whether it is stale.
	selectLatencyStates = `
SELECT day, argMax(stale, computed_ns), max(computed_ns)
FROM latency_days
WHERE day >= ? AND day < ?
GROUP BY day`

	// insertLatencyStates makes version ? current for the days the array
	// ? lists.
	insertLatencyStates = `
INSERT INTO latency_days (day, stale, computed_ns)
SELECT arrayJoin(?), toUInt8(0), toUInt64(?)`

	// markTouchedLatency marks stale, as {version}, the days rows of some
	// {parts} of {table} fall on.
	markTouchedLatency = `
INSERT INTO latency_days (day, stale, computed_ns)
SELECT DISTINCT toUInt32(intDiv(start_ns, ` + schema.DaySQL + `)), toUInt8(1), toUInt64({version})
FROM {table}
WHERE _part IN {parts}`
)

// planLatency splits f's range into whole past days, their summaries made
// current, and the live rest; all live on a cluster (changes.go).
func (s Store) planLatency(ctx context.Context, f LatencyFilter, now time.Time) (costPlan, error) {
	l, err := s.layout(ctx)
	if err != nil {
		return costPlan{}, err
	}
	if l.cluster != "" {
		return liveLatency(f), nil
	}
	p := planCost(CostFilter{FromNS: f.FromNS, ToNS: f.ToNS, Project: f.Project}, now)
	if p.fromDay >= p.toDay {
		return p, nil
	}
	if err := s.catchUp(ctx, "latency", s.markAllLatency, s.markTouchedLatency); err != nil {
		return p, err
	}
	// Taken before the states are read: a mark that lands after is newer
	// and makes the recompute stale again.
	version := nextVersion()
	current, err := s.latencyStates(ctx, p.fromDay, p.toDay)
	if err != nil {
		return p, err
	}
	var stale []uint32
	for d := p.fromDay; d < p.toDay; d++ {
		if v, ok := current[d]; ok {
			p.versions = append(p.versions, costVersion(d, v))
		} else {
			stale = append(stale, d)
		}
	}
	if len(stale) == 0 {
		return p, nil
	}
	keys, err := s.recomputeLatency(ctx, stale, version)
	p.versions = append(p.versions, keys...)
	return p, err
}

// latencyStates returns the current version of each day of [fromDay,
// toDay) whose latency summary is not stale.
func (s Store) latencyStates(ctx context.Context, fromDay, toDay uint32) (map[uint32]uint64, error) {
	rows, err := s.db.Query(ctx, selectLatencyStates, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("query latency summary states: %w", err)
	}
	defer rows.Close()
	current := map[uint32]uint64{}
	for rows.Next() {
		var (
			day     uint32
			stale   uint8
			version uint64
		)
		if err := rows.Scan(&day, &stale, &version); err != nil {
			return nil, fmt.Errorf("scan latency summary state: %w", err)
		}
		if stale == 0 {
			current[day] = version
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read latency summary states: %w", err)
	}
	return current, nil
}

// liveLatency plans the whole of f's range read live.
func liveLatency(f LatencyFilter) costPlan {
	return costPlan{project: f.Project, head: CostFilter{FromNS: f.FromNS, ToNS: f.ToNS}}
}

// latencyInserts are insertLatencyDaily, insertLatencyCrossing and
// insertLatencyErrors of days, sorted, as version.
func latencyInserts(days []uint32, version uint64) []sqlText {
	from, to := uint64(days[0])*schema.DayNS, uint64(days[len(days)-1]+1)*schema.DayNS
	pieces := sqlf(latencyPieces, holes{"days": arg(days), "from": arg(from), "to": arg(to),
		"from_sec": arg(from / uint64(time.Second)), "to_sec": arg(to / uint64(time.Second))})
	p := holes{"version": arg(version), "pieces": pieces}
	return []sqlText{sqlf(insertLatencyDaily, p), sqlf(insertLatencyCrossing, p), sqlf(insertLatencyErrors, p)}
}

// recomputeLatency summarizes days as version and returns the costVersion
// keys to read them by; requests that find the same days stale share it.
func (s Store) recomputeLatency(ctx context.Context, days []uint32, version uint64) ([]string, error) {
	recompute := func() (any, error) {
		g, gctx := errgroup.WithContext(ctx)
		for _, insert := range latencyInserts(days, version) {
			g.Go(func() error {
				if err := insert.exec(gctx, s.db); err != nil {
					return fmt.Errorf("summarize latency of days %d..%d: %w", days[0], days[len(days)-1]+1, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		// The states go last: a reader that finds a version finds all its
		// rows.
		if err := s.db.Exec(ctx, insertLatencyStates, days, version); err != nil {
			return nil, fmt.Errorf("record latency summary versions: %w", err)
		}
		keys := make([]string, len(days))
		for i, d := range days {
			keys[i] = costVersion(d, version)
		}
		return keys, nil
	}
	if s.flights == nil {
		keys, err := recompute()
		return keys.([]string), err
	}
	keys, err, _ := s.flights.Do(fmt.Sprint("latency days ", days), recompute)
	if err != nil {
		return nil, err
	}
	return keys.([]string), nil
}

// markTouchedLatency marks stale the days that rows of parts fall on.
func (s Store) markTouchedLatency(ctx context.Context, parts []part) error {
	version := nextVersion()
	return eachSource(parts, func(src *partSource, names []string) error {
		q := sqlf(markTouchedLatency, holes{"version": arg(version), "table": raw(src.table), "parts": arg(ddl.Tuple(names))})
		if err := q.exec(ctx, src.db); err != nil {
			return fmt.Errorf("mark latency summaries of new parts stale%s: %w", src.on(), err)
		}
		return nil
	})
}

// markAllLatency marks every day stale, when there is no telling what
// changed.
func (s Store) markAllLatency(ctx context.Context) error {
	_, err := Begin(ctx, s.db, Change{})
	return err
}
