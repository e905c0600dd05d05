package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store/page"
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

// providerCall selects the one row of each provider call, the turn that
// ended it: the only turns with a cost source (README, "Cost"). A tool run
// is not a provider call, even when its writer gave its turns usage, and so
// a source. Every count of calls (the cost page and its JSON, convtrace
// cost, the MCP cost tool, a thread's phase totals) reads it.
const providerCall = `cost_source != '' AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error')`

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

const (
	// selectPhaseTotals is a thread's usage per phase, in the order the
	// phases began. Phases group case-insensitively, as the thread page
	// groups its turns; phaseTotals also folds what differs only in
	// surrounding space. It reads one copy of each turn, the newest
	// revision, as FINAL would, from the thread's rows alone: FINAL on
	// 18.16 reads far more than the thread.
	selectPhaseTotals = `
SELECT any(phase) AS phase_name, min(start_ns) AS first_ns,` + costUsageColumns + `
FROM
(
    SELECT phase, start_ns, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning,
           cost_usd, cost_source, role
    FROM conversations
    WHERE thread_id = ?
    ORDER BY project, thread_id, start_ns, turn_id, revision DESC
    LIMIT 1 BY project, thread_id, start_ns, turn_id
) AS t
WHERE ` + providerCall + `
GROUP BY lowerUTF8(phase)
ORDER BY first_ns, phase_name`
)

// startedIn is the condition on the rows that started in [fromNS, toNS):
// on ts first, the partition key, then exactly on start_ns.
func startedIn(fromNS, toNS uint64) sqlText {
	fromSec, toSec := schema.TSBounds(fromNS, toNS)
	return sqlf(`ts >= toDateTime({from_sec}) AND ts <= toDateTime({to_sec}) AND start_ns >= {from} AND start_ns < {to}`,
		holes{"from_sec": arg(fromSec), "to_sec": arg(toSec), "from": arg(fromNS), "to": arg(toNS)})
}

// ofProject is the condition on the rows of project, every row when "".
func ofProject(project string) sqlText {
	return sqlf(`({project} = '' OR project = {project})`, holes{"project": arg(project)})
}

// PhaseTotal is a thread's usage in one phase.
type PhaseTotal struct {
	Phase string `json:"phase"`
	CostUsage
}

// PhaseTotals returns a thread's usage per phase, grouped and ordered as
// the thread page groups its turns (see phaseOrder); empty when no call of
// the thread reported usage.
func (s Store) PhaseTotals(ctx context.Context, threadID string) ([]PhaseTotal, error) {
	rows, err := s.db.Query(ctx, selectPhaseTotals, threadID)
	if err != nil {
		return nil, fmt.Errorf("query phase totals: %w", err)
	}
	defer rows.Close()
	byKey := map[string]*PhaseTotal{}
	var firstSeen []string // phase keys in the order the phases began
	for rows.Next() {
		var (
			p     PhaseTotal
			first uint64
		)
		if err := rows.Scan(append([]any{&p.Phase, &first}, p.CostUsage.dest()...)...); err != nil {
			return nil, fmt.Errorf("scan phase total: %w", err)
		}
		p.round()
		key := strings.ToLower(strings.TrimSpace(p.Phase))
		if t, ok := byKey[key]; ok {
			t.Add(p.CostUsage)
			continue
		}
		byKey[key] = &p
		firstSeen = append(firstSeen, key)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read phase totals: %w", err)
	}
	totals := make([]PhaseTotal, 0, len(firstSeen))
	for _, key := range page.PhaseOrder(firstSeen) {
		totals = append(totals, *byKey[key])
	}
	return totals, nil
}

// dest returns the scan destinations of costUsageColumns.
func (u *CostUsage) dest() []any {
	return []any{&u.Calls, &u.TokensIn, &u.TokensOut, &u.CacheRead, &u.CacheWrite, &u.Reasoning, &u.CostUSD, &u.Unpriced}
}

// QueryCost returns the usage of the calls f selects per day, model,
// provider, phase, speaker and agent, with cache savings priced by p (nil:
// unknown), for the convtrace cost command. Fold it with GroupCost. Like
// the cost page it reads and refreshes the summaries.
func (s Store) QueryCost(ctx context.Context, f CostFilter, p pricing.Prices) ([]CostCell, error) {
	cells, _, err := s.CostData(ctx, f, true, 0, time.Now())
	if err != nil {
		return nil, err
	}
	AddSavings(cells, p)
	return cells, nil
}

// The cost report reads whole days from the summaries (cost_daily,
// cost_thread_daily; see store/ddl/sql/0006_cost_rollup.sql and
// cost_rollup.go) and the rest of its range, at most a day or so at each
// end, live from conversations, each turn once (costLiveRows): one query
// per report table, the two sources added up in SQL.
const (
	// costVersionWhere keeps the summary rows of days [{from}, {to}) of
	// {in_project} (ofProject) whose versions the request checked fresh:
	// {versions} is an array of costVersion keys. A key names day and
	// computed_ns, so a version inserted for other days is never read.
	costVersionWhere = `
WHERE day >= {from} AND day < {to} AND {in_project}
  AND has({versions}, concat(toString(day), '/', toString(computed_ns)))`

	// The parts' usage columns get names of their own: the outer sums
	// take costUsageColumns' names, which must not alias themselves.
	costPartColumns = `
        calls AS c_calls, tokens_in AS c_in, tokens_out AS c_out, tokens_cache_read AS c_cache_read,
        tokens_cache_write AS c_cache_write, tokens_reasoning AS c_reasoning, cost_usd AS c_cost, unpriced AS c_unpriced`
	costSumColumns = `
        sum(c_calls) AS calls, sum(c_in) AS sum_in, sum(c_out) AS sum_out, sum(c_cache_read) AS sum_cache_read,
        sum(c_cache_write) AS sum_cache_write, sum(c_reasoning) AS sum_reasoning, sum(c_cost) AS sum_cost,
        sum(c_unpriced) AS unpriced`

	// selectCostCells is the one aggregation of the range a report needs
	// besides its top threads: a few thousand cells at most (days × models
	// × phases × speakers × agents), folded in Go into every table. Its
	// three parts cover disjoint days: the {summarized} ones (a
	// costVersionWhere), the live {head} and the live {tail}
	// (selectLiveCells). Dimensions are cast to String so that the parts'
	// types agree on every server.
	selectCostCells = `
SELECT day_number, cell_model AS model, cell_provider AS provider, cell_phase AS phase,
       cell_speaker AS speaker, cell_agent AS agent,` + costSumColumns + `
FROM
(
    SELECT toUInt64(day) AS day_number, CAST(model AS String) AS cell_model, CAST(provider AS String) AS cell_provider,
           CAST(phase AS String) AS cell_phase, CAST(speaker AS String) AS cell_speaker, CAST(agent AS String) AS cell_agent,` +
		costPartColumns + `
    FROM cost_daily{summarized}
    UNION ALL{head}
    UNION ALL{tail}
)
GROUP BY day_number, cell_model, cell_provider, cell_phase, cell_speaker, cell_agent
ORDER BY day_number, cell_model, cell_provider, cell_phase, cell_speaker, cell_agent`

	// costLiveRows are the rows of one live range (head or tail of the
	// report's range, possibly empty) that {started} (startedIn) and
	// {in_project} select, each turn once. Not FINAL: the ts partition key
	// only prunes whole months, and FINAL would merge a month of turns to
	// read a day. PREWHERE reads the two narrow time columns of those
	// months and the rest only where they match; LIMIT 1 BY the sort key
	// folds a turn delivered twice as FINAL does.
	costLiveRows = `
    FROM
    (
        SELECT project, thread_id, turn_id, start_ns, model, provider, phase, speaker, agent, tokens_in, tokens_out,
               tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source
        FROM conversations
        PREWHERE {started}
        WHERE {in_project}
          AND ` + providerCall + `
        LIMIT 1 BY project, thread_id, start_ns, turn_id
    )`

	// selectLiveCells sums the cells of the {rows} of a costLiveRows.
	selectLiveCells = `
    SELECT intDiv(start_ns, ` + schema.DaySQL + `) AS live_day, CAST(model AS String) AS live_model,
           CAST(provider AS String) AS live_provider, CAST(phase AS String) AS live_phase,
           CAST(speaker AS String) AS live_speaker, CAST(agent AS String) AS live_agent,` + costUsageColumns + `{rows}
    GROUP BY live_day, model, provider, phase, speaker, agent`

	// selectCostThreads returns the {limit} most expensive threads of the
	// range from the same three parts; a thread with no known cost sorts
	// last.
	selectCostThreads = `
SELECT thread_id, any(part_project) AS thread_project,` + costSumColumns + `
FROM
(
    SELECT thread_id, CAST(project AS String) AS part_project,` + costPartColumns + `
    FROM cost_thread_daily{summarized}
    UNION ALL{head}
    UNION ALL{tail}
)
GROUP BY thread_id
ORDER BY sum_cost DESC, thread_id
LIMIT {limit}`

	// selectLiveThreads sums the threads of the {rows} of a costLiveRows.
	selectLiveThreads = `
    SELECT thread_id, CAST(any(project) AS String) AS live_project,` + costUsageColumns + `{rows}
    GROUP BY thread_id`
)

// summarized is costVersionWhere of p's summarized days.
func (p costPlan) summarized() sqlText {
	versions := p.versions
	if len(versions) == 0 {
		// An empty array literal has no element type on 18.16; "" is no
		// key.
		versions = []string{""}
	}
	return sqlf(costVersionWhere, holes{"from": arg(p.fromDay), "to": arg(p.toDay), "in_project": ofProject(p.project),
		"versions": arg(versions)})
}

// liveRows is costLiveRows of f's range.
func (f CostFilter) liveRows() sqlText {
	return sqlf(costLiveRows, holes{"started": startedIn(f.FromNS, f.ToNS), "in_project": ofProject(f.Project)})
}

// costCellsQuery is selectCostCells of p.
func (p costPlan) costCellsQuery() sqlText {
	return sqlf(selectCostCells, holes{"summarized": p.summarized(),
		"head": sqlf(selectLiveCells, holes{"rows": p.head.liveRows()}),
		"tail": sqlf(selectLiveCells, holes{"rows": p.tail.liveRows()})})
}

// costThreadsQuery is selectCostThreads of p, at most limit threads.
func (p costPlan) costThreadsQuery(limit int) sqlText {
	return sqlf(selectCostThreads, holes{"summarized": p.summarized(), "limit": arg(uint64(limit)),
		"head": sqlf(selectLiveThreads, holes{"rows": p.head.liveRows()}),
		"tail": sqlf(selectLiveThreads, holes{"rows": p.tail.liveRows()})})
}

// costCells returns the usage of the plan's range per day, model,
// provider, phase, speaker and agent.
func (s Store) costCells(ctx context.Context, p costPlan) ([]CostCell, error) {
	q := p.costCellsQuery()
	rows, err := s.db.Query(costContext(ctx), q.text, q.args...)
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
		c.round()
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

// costThreads returns at most limit threads of the plan's range, most
// expensive first.
func (s Store) costThreads(ctx context.Context, p costPlan, limit int) ([]CostThread, error) {
	q := p.costThreadsQuery(limit)
	rows, err := s.db.Query(costContext(ctx), q.text, q.args...)
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
		t.round()
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cost threads: %w", err)
	}
	return threads, nil
}

// AddSavings sets the cache savings of each cell whose model has a price
// and whose calls read from the cache.
func AddSavings(cells []CostCell, p pricing.Prices) {
	for i := range cells {
		c := &cells[i]
		if c.CacheRead == nil {
			continue
		}
		if usd, ok := p.CacheSavings(c.Model, *c.CacheRead); ok {
			c.CacheSavingsUSD = roundKnown(&usd)
		}
	}
}

// costQueryBytes bounds the text of a cost query. Its version keys take
// about 30 bytes a day of the range: past ClickHouse's default of 256 KiB
// from 24 years on, 1 MiB at a century.
const costQueryBytes = 16 << 20

// costContext lets a cost query be as long as its range makes it.
func costContext(ctx context.Context) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_query_size": costQueryBytes}))
}
