package viewer

import (
	"context"
	"fmt"
	"time"
)

// CostUsage is what a group of calls used and cost. Sums are nil when no
// call of the group reported the value (JSON null, shown as —), never 0.
type CostUsage struct {
	Calls      uint64   `json:"calls"`
	TokensIn   *uint64  `json:"tokens_in"`
	TokensOut  *uint64  `json:"tokens_out"`
	CacheRead  *uint64  `json:"tokens_cache_read"`
	CacheWrite *uint64  `json:"tokens_cache_write"`
	Reasoning  *uint64  `json:"tokens_reasoning"`
	CostUSD    *float64 `json:"cost_usd"`
	// Unpriced counts the calls with tokens whose model has no price: their
	// cost is unknown and not in CostUSD.
	Unpriced uint64 `json:"unpriced_calls"`
	// CacheSavingsUSD is what the cache-read tokens would have cost as
	// uncached input, minus what they cost, for the models with a price.
	CacheSavingsUSD *float64 `json:"cache_savings_usd"`
}

// CostCell is the usage of one day, model, provider, phase, speaker and
// agent: the finest grouping a cost report reads, which every table of the
// report folds.
type CostCell struct {
	Day      string `json:"day"` // UTC, 2006-01-02
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Phase    string `json:"phase"`
	Speaker  string `json:"speaker"`
	Agent    string `json:"agent"`
	CostUsage
}

// CostFilter selects the calls a cost report covers: those that started in
// [FromNS, ToNS) of Project ("" = every project).
type CostFilter struct {
	FromNS, ToNS uint64
	Project      string
}

// costUsageColumns sums the usage of the calls of a group. Only rows with
// a cost source carry usage: the response rows with tokens or a cost
// (prompt and tool rows have the empty source). The aliases differ from the
// column names: see threadColumns.
const costUsageColumns = `
        count() AS calls,
        sum(tokens_in) AS sum_in,
        sum(tokens_out) AS sum_out,
        sum(tokens_cache_read) AS sum_cache_read,
        sum(tokens_cache_write) AS sum_cache_write,
        sum(tokens_reasoning) AS sum_reasoning,
        sum(cost_usd) AS sum_cost,
        countIf(cost_source = 'unknown') AS unpriced`

// costWhere bounds the scan by the ts partition column first (whole
// seconds, so the bounds widen by one) and then exactly by start_ns.
// FINAL folds a turn delivered twice, so that no total counts it twice.
const costWhere = `
FROM conversations FINAL
WHERE ts >= toDateTime(?) AND ts <= toDateTime(?)
  AND start_ns >= ? AND start_ns < ?
  AND (? = '' OR project = ?)
  AND cost_source != ''`

const (
	// selectCostCells is the one aggregation of the range a report needs
	// besides its top threads: a few thousand cells at most (days × models
	// × phases × speakers × agents), folded in Go into every table.
	selectCostCells = `
SELECT intDiv(start_ns, 86400000000000) AS day_number, model, provider, phase, speaker, agent,` + costUsageColumns +
		costWhere + `
GROUP BY day_number, model, provider, phase, speaker, agent
ORDER BY day_number, model, provider, phase, speaker, agent`

	// selectCostThreads returns the most expensive threads; a thread with
	// no known cost sorts last.
	selectCostThreads = `
SELECT thread_id, any(project) AS thread_project,` + costUsageColumns +
		costWhere + `
GROUP BY thread_id
ORDER BY sum_cost DESC, thread_id
LIMIT ?`

	// selectPhaseTotals is a thread's usage per phase, in the order the
	// phases began.
	selectPhaseTotals = `
SELECT phase, min(start_ns) AS first_ns,` + costUsageColumns + `
FROM conversations FINAL
WHERE thread_id = ? AND cost_source != ''
GROUP BY phase
ORDER BY first_ns, phase`
)

// costArgs are the bound arguments of costWhere.
func (f CostFilter) costArgs() []any {
	to := f.ToNS
	if to == 0 {
		to = ^uint64(0)
	}
	toSec := to/uint64(time.Second) + 1
	if toSec > 1<<32-1 {
		toSec = 1<<32 - 1 // DateTime ends in 2106
	}
	return []any{f.FromNS / uint64(time.Second), toSec, f.FromNS, to, f.Project, f.Project}
}

// costCells returns the usage of the range per day, model, provider, phase,
// speaker and agent.
func (s store) costCells(ctx context.Context, f CostFilter) ([]CostCell, error) {
	rows, err := s.db.Query(ctx, selectCostCells, f.costArgs()...)
	if err != nil {
		return nil, fmt.Errorf("query cost: %w", err)
	}
	defer rows.Close()
	cells := []CostCell{}
	for rows.Next() {
		var (
			c   CostCell
			day uint64
		)
		dest := append([]any{&day, &c.Model, &c.Provider, &c.Phase, &c.Speaker, &c.Agent}, c.CostUsage.dest()...)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan cost: %w", err)
		}
		c.Day = time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly)
		cells = append(cells, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cost: %w", err)
	}
	return cells, nil
}

// CostThread is one thread's usage in a cost report. Its cache savings
// stay unknown: they are priced per model, and a report reads threads
// without their models.
type CostThread struct {
	ThreadID string `json:"thread_id"`
	Project  string `json:"project"`
	CostUsage
}

// costThreads returns at most limit threads of the range, most expensive
// first.
func (s store) costThreads(ctx context.Context, f CostFilter, limit int) ([]CostThread, error) {
	rows, err := s.db.Query(ctx, selectCostThreads, append(f.costArgs(), uint64(limit))...)
	if err != nil {
		return nil, fmt.Errorf("query cost threads: %w", err)
	}
	defer rows.Close()
	threads := []CostThread{}
	for rows.Next() {
		var t CostThread
		if err := rows.Scan(append([]any{&t.ThreadID, &t.Project}, t.CostUsage.dest()...)...); err != nil {
			return nil, fmt.Errorf("scan cost thread: %w", err)
		}
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cost threads: %w", err)
	}
	return threads, nil
}

// PhaseTotal is a thread's usage in one phase.
type PhaseTotal struct {
	Phase string `json:"phase"`
	CostUsage
}

// phaseTotals returns a thread's usage per phase, in the order the phases
// began; empty when no call of the thread reported usage.
func (s store) phaseTotals(ctx context.Context, threadID string) ([]PhaseTotal, error) {
	rows, err := s.db.Query(ctx, selectPhaseTotals, threadID)
	if err != nil {
		return nil, fmt.Errorf("query phase totals: %w", err)
	}
	defer rows.Close()
	totals := []PhaseTotal{}
	for rows.Next() {
		var (
			p     PhaseTotal
			first uint64
		)
		if err := rows.Scan(append([]any{&p.Phase, &first}, p.CostUsage.dest()...)...); err != nil {
			return nil, fmt.Errorf("scan phase total: %w", err)
		}
		totals = append(totals, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read phase totals: %w", err)
	}
	return totals, nil
}

// dest returns the scan destinations of costUsageColumns.
func (u *CostUsage) dest() []any {
	return []any{&u.Calls, &u.TokensIn, &u.TokensOut, &u.CacheRead, &u.CacheWrite, &u.Reasoning, &u.CostUSD, &u.Unpriced}
}

// QueryCost returns the usage of the calls f selects per day, model,
// provider, phase, speaker and agent, with cache savings priced by p (nil:
// unknown), for the convtrace cost command. Fold it with GroupCost.
func QueryCost(ctx context.Context, db DB, f CostFilter, p CachePricer) ([]CostCell, error) {
	cells, err := store{db: db}.costCells(ctx, f)
	if err != nil {
		return nil, err
	}
	addSavings(cells, p)
	return cells, nil
}
