package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store/page"
)

// LatencyDimensions are what a latency report groups calls by, in the
// order of its tables; "all" is its one row of every call.
var LatencyDimensions = []string{"model", "provider", "phase", "speaker"}

// LatencyFilter selects the calls a latency report covers: those that
// ended in [FromNS, ToNS), of Project, Model, Provider, Phase and Speaker
// where set ("" = any).
type LatencyFilter struct {
	FromNS, ToNS                    uint64
	Project, Model, Provider, Phase string
	Speaker                         string
}

// ParseLatencyRange reads a latency report's from and to: from defaults
// to 7 days back, to to now.
func ParseLatencyRange(from, to string, now time.Time) (LatencyFilter, error) {
	if strings.TrimSpace(from) == "" {
		from = "7d"
	}
	f, err := ParseCostRange(from, to, now)
	return LatencyFilter{FromNS: f.FromNS, ToNS: f.ToNS}, err
}

// Percentiles are the 50th, 95th and 99th percentiles of a set of
// durations in nanoseconds, each a value of the set (see LatencyGroup).
type Percentiles struct {
	P50 uint64 `json:"p50_ns"`
	P95 uint64 `json:"p95_ns"`
	P99 uint64 `json:"p99_ns"`
}

// LatencyGroup is the latency of the calls that share one value of a
// dimension. Percentiles are exact, ClickHouse's quantilesExact: the
// level·n-th (0-based, rounded down) of the n values sorted, never an
// interpolation. TTFT is over the TTFTCalls calls that reported a time to
// first token, nil when none did.
type LatencyGroup struct {
	Key       string       `json:"key"`
	Calls     uint64       `json:"calls"`
	Failed    uint64       `json:"failed"`
	ErrorRate float64      `json:"error_rate"` // Failed / Calls
	Duration  Percentiles  `json:"duration"`
	TTFTCalls uint64       `json:"ttft_calls"`
	TTFT      *Percentiles `json:"ttft"`
}

// LatencyTable is a latency report's calls grouped by one dimension, the
// most called first.
type LatencyTable struct {
	By   string         `json:"by"`
	Rows []LatencyGroup `json:"rows"`
}

// selectLatency reads a range's calls, past days from their summaries
// ({summarized}) and the rest live ({head}, {tail}), folding a call's copies
// by span and merging quantilesExact states (docs/design/queries.md).
const selectLatency = `
SELECT dim.1 AS dimension, dim.2 AS dim_key,
       sum(cell_calls) AS calls,
       sum(cell_failed) AS failed,
       quantilesExactMerge(0.5, 0.95, 0.99)(cell_duration) AS duration_q,
       sum(cell_ttft_calls) AS ttft_calls,
       quantilesExactIfMerge(0.5, 0.95, 0.99)(cell_ttft) AS ttft_q
FROM
(
    SELECT arrayJoin([('all', ''), ('model', call_model), ('provider', call_provider),
                      ('phase', call_phase), ('speaker', call_speaker)]) AS dim,
           cell_calls, cell_failed, cell_duration, cell_ttft_calls, cell_ttft
    FROM
    (
        SELECT CAST(model AS String) AS call_model, CAST(provider AS String) AS call_provider,
               CAST(phase AS String) AS call_phase, CAST(speaker AS String) AS call_speaker,
               calls AS cell_calls, failed AS cell_failed, duration AS cell_duration,
               ttft_calls AS cell_ttft_calls, ttft AS cell_ttft
        FROM latency_daily{summarized}{cells}
        UNION ALL
        SELECT call_model, call_provider, call_phase, call_speaker,
               count() AS cell_calls,
               sum(call_failed) AS cell_failed,
               quantilesExactState(0.5, 0.95, 0.99)(call_duration) AS cell_duration,
               countIf(call_ttft > 0) AS cell_ttft_calls,
               quantilesExactIfState(0.5, 0.95, 0.99)(call_ttft, call_ttft > 0) AS cell_ttft
        FROM
        (
            SELECT any(piece_model) AS call_model, any(piece_provider) AS call_provider,
                   any(piece_phase) AS call_phase, any(piece_speaker) AS call_speaker,
                   max(piece_duration) AS call_duration,
                   max(piece_ttft) AS call_ttft,
                   max(piece_failed) AS call_failed
            FROM
            (
                SELECT trace_id, span_id,` + latencyPieceCells + `,
                       toUInt8(1) AS piece_ends, duration_ns AS piece_duration, ttft_ns AS piece_ttft, failed AS piece_failed
                FROM latency_crossing{summarized}{cells}
                UNION ALL
                SELECT trace_id, span_id,` + latencyPieceCells + `, toUInt8(0), toUInt64(0), ttft_ns, toUInt8(1)
                FROM latency_errors{summarized}{cells}
                  AND (trace_id, span_id) IN
                  (
                      SELECT trace_id, span_id
                      FROM latency_crossing{summarized}
                      UNION ALL
                      SELECT trace_id, span_id
                      FROM conversations
                      PREWHERE {tail}
                      WHERE cost_source != '' AND start_ns < {tail_from} + duration_ns
                  )
                UNION ALL
                SELECT trace_id, span_id,` + latencyPieceCells + `, CAST(cost_source != '' AS UInt8),
                       if(cost_source != '', duration_ns, 0), ttft_ns, CAST(role = 'error' OR status = 'error' AS UInt8)
                FROM conversations
                PREWHERE {head}
                      OR {tail}
                WHERE {in_project}{cells}
                  AND (cost_source != '' OR role = 'error' OR status = 'error')
            )
            GROUP BY trace_id, span_id
            HAVING max(piece_ends) > 0
        )
        GROUP BY call_model, call_provider, call_phase, call_speaker
    )
)
GROUP BY dimension, dim_key
ORDER BY dimension, calls DESC, dim_key`

// latencyPieceCells are a piece's dimensions, cast so that the parts'
// types agree on every server.
const latencyPieceCells = `
                       CAST(model AS String) AS piece_model, CAST(provider AS String) AS piece_provider,
                       CAST(phase AS String) AS piece_phase, CAST(speaker AS String) AS piece_speaker`

// latencyCells is the condition of a report's {model}, {provider}, {phase}
// and {speaker} ("" for any).
const latencyCells = `
  AND ({model} = '' OR model = {model}) AND ({provider} = '' OR provider = {provider})
  AND ({phase} = '' OR phase = {phase}) AND ({speaker} = '' OR speaker = {speaker})`

// latencyQuery is selectLatency of f planned as p.
func latencyQuery(p costPlan, f LatencyFilter) sqlText {
	return sqlf(selectLatency, holes{"summarized": p.summarized(), "in_project": ofProject(f.Project),
		"head": startedIn(p.head.FromNS, p.head.ToNS), "tail": startedIn(p.tail.FromNS, p.tail.ToNS), "tail_from": arg(p.tail.FromNS),
		"cells": sqlf(latencyCells, holes{"model": arg(f.Model), "provider": arg(f.Provider), "phase": arg(f.Phase), "speaker": arg(f.Speaker)})})
}

// Latency returns the latency of the calls f selects: first the row of
// every call (nil when there is none), then one table per dimension of by
// (LatencyDimensions when empty), each listing every value seen.
func (s Store) Latency(ctx context.Context, f LatencyFilter, by []string) (*LatencyGroup, []LatencyTable, error) {
	if len(by) == 0 {
		by = LatencyDimensions
	}
	for _, d := range by {
		if !slices.Contains(LatencyDimensions, d) {
			return nil, nil, page.BadParam("group_by", "%q is not one of %s", d, strings.Join(LatencyDimensions, ", "))
		}
	}
	p, err := s.planLatency(ctx, f, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return s.latency(ctx, p, f, by)
}

// latency reads the report of f planned as p.
func (s Store) latency(ctx context.Context, p costPlan, f LatencyFilter, by []string) (*LatencyGroup, []LatencyTable, error) {
	q := latencyQuery(p, f)
	rows, err := s.db.Query(costContext(ctx), q.text, q.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query latency: %w", err)
	}
	defer rows.Close()
	var all *LatencyGroup
	tables := make([]LatencyTable, len(by))
	for i, d := range by {
		tables[i] = LatencyTable{By: d, Rows: []LatencyGroup{}}
	}
	for rows.Next() {
		var (
			dimension      string
			g              LatencyGroup
			duration, ttft []uint64
		)
		if err := rows.Scan(&dimension, &g.Key, &g.Calls, &g.Failed, &duration, &g.TTFTCalls, &ttft); err != nil {
			return nil, nil, fmt.Errorf("scan latency: %w", err)
		}
		g.Duration = percentiles(duration)
		if g.TTFTCalls > 0 {
			p := percentiles(ttft)
			g.TTFT = &p
		}
		if g.Calls > 0 {
			g.ErrorRate = float64(g.Failed) / float64(g.Calls)
		}
		if dimension == "all" {
			all = &g
			continue
		}
		if i := slices.Index(by, dimension); i >= 0 {
			tables[i].Rows = append(tables[i].Rows, g)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read latency: %w", err)
	}
	return all, tables, nil
}

// percentiles reads quantilesExact(0.5, 0.95, 0.99).
func percentiles(q []uint64) Percentiles {
	if len(q) != 3 {
		return Percentiles{}
	}
	return Percentiles{P50: q[0], P95: q[1], P99: q[2]}
}
