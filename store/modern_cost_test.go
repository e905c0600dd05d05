package store

import (
	"fmt"
	"testing"
	"time"
)

// The cost queries run on a modern server (chDB 26.x) too, return the
// types the Go side scans and count a turn delivered twice once.
func TestCostQueriesOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, project, thread_id, phase, role, seq, model, tokens_in, tokens_out, tokens_cache_read, cost_usd, cost_source, start_ns) VALUES "
	const day = 86400_000_000_000
	rows := fmt.Sprintf(`('a:prompt:0', 'a', 'p', 'th1', 'plan', 'prompt', 0, 'gpt-5', NULL, NULL, NULL, NULL, '', %d),
	      ('a:response:1', 'a', 'p', 'th1', 'plan', 'response', 1, 'gpt-5', 1000, 100, 800, 0.5, 'priced', %d),
	      ('b:response:1', 'b', 'p', 'th1', 'review', 'response', 1, 'qwen', 10, 10, NULL, NULL, 'unknown', %d)`, day+1, day+2, 2*day)
	fixtures := []string{cols + rows, cols + rows} // the same batch delivered twice
	// Summarize day 1 (version 100) as refreshCost does; day 2 is read
	// live, as the tail of the range.
	// Day 1 has copies (the batch delivered twice): folded with FINAL.
	recompute := []any{uint64(100), uint64(86400), uint64(2 * 86400), uint64(day), uint64(2 * day), sqlArray([]uint32{1})}
	fixtures = append(fixtures,
		inline(t, fmt.Sprintf(insertCostDaily, folded), recompute...),
		inline(t, fmt.Sprintf(insertCostThreadDaily, folded), recompute...),
		inline(t, insertCostStates, sqlArray([]uint32{1}), uint64(100)),
		// Then the parts arrive that hold day 2 and day 1 again: both
		// stale, newer than the state of day 1.
		inline(t, sqlf(invalidateTouchedDays, holes{"version": raw("200"), "table": raw("conversations"), "parts": raw(activeParts)}).text),
		// A recompute of days 1 and 2 as they are (version 300), whose
		// per-thread sums count the copies.
		inline(t, fmt.Sprintf(insertCostThreadDaily, asTheyAre), append(append([]any{uint64(300)}, dayArgs(0, 3)...), sqlArray([]uint32{1, 2}))...))
	p := planCost(CostFilter{FromNS: day, ToNS: 2*day + 1, Project: "p"}, time.Unix(0, 5*day))
	p.versions = []string{costVersion(1, 100)}
	queries := []string{
		inlineSQL(t, p.costCellsQuery()),
		inlineSQL(t, p.costThreadsQuery(10)),
		inline(t, selectPhaseTotals, "th1"),
		inline(t, selectCostStates, uint32(0), uint32(3)),
		sqlf(selectActiveParts, holes{"table": raw("'conversations'")}).text,
		inline(t, selectCopyDays, uint64(300)) + " ORDER BY day",
		// As they are, day 1 counts its copies: what copyDays keeps it from.
		"SELECT calls FROM (" + inline(t, fmt.Sprintf(selectCostDaily, asTheyAre), append([]any{uint64(1)}, append(dayArgs(0, 3), sqlArray([]uint32{1}))...)...) + ")",
	}
	out := runModern(t, fixtures, queries)
	wantTypes := map[string]string{
		"day_number": "UInt64", "st_stale": "UInt8", "version": "UInt64", "min_block_number": "Int64", "max_block_number": "Int64", "calls": "UInt64", "sum_in": "Nullable(UInt64)", "sum_cache_read": "Nullable(UInt64)",
		"sum_cost": "Nullable(Float64)", "unpriced": "UInt64", "first_ns": "UInt64",
	}
	for i, res := range out.Results {
		for _, c := range res.Columns {
			if want, ok := wantTypes[c.Name]; ok && c.Type != want {
				t.Errorf("query %d column %s is %s, want %s", i, c.Name, c.Type, want)
			}
		}
	}
	var cells []string
	for _, r := range out.Results[0].Rows {
		cells = append(cells, fmt.Sprintf("%v %v calls=%v in=%v cost=%v unpriced=%v", r["day_number"], r["model"], r["calls"], r["sum_in"], r["sum_cost"], r["unpriced"]))
	}
	if got, want := fmt.Sprint(cells), "[1 gpt-5 calls=1 in=1000 cost=0.5 unpriced=0 2 qwen calls=1 in=10 cost=<nil> unpriced=1]"; got != want {
		t.Errorf("cost cells:\n got %s\nwant %s", got, want)
	}
	if th := out.Results[1].Rows; len(th) != 1 || fmt.Sprint(th[0]["calls"]) != "2" || fmt.Sprint(th[0]["sum_cost"]) != "0.5" {
		t.Errorf("cost threads = %v, want th1 with 2 calls costing 0.5", th)
	}
	// The states say both days are stale, as the parts' rows mark them.
	if got, want := fmt.Sprint(out.Results[3].Rows), "[map[day:1 st_stale:1 version:200] map[day:2 st_stale:1 version:200]]"; got != want {
		t.Errorf("cost states:\n got %s\nwant %s", got, want)
	}
	if parts := out.Results[4].Rows; len(parts) == 0 {
		t.Error("no active part of conversations listed")
	}
	if got := fmt.Sprint(out.Results[5].Rows); got != "[map[day:1] map[day:2]]" {
		t.Errorf("days with copies = %s, want days 1 and 2 (the batch was delivered twice)", got)
	}
	if got := fmt.Sprint(out.Results[6].Rows); got != "[map[calls:2]]" {
		t.Errorf("day 1 summed as it is = %s, want 2 calls (its one call twice)", got)
	}
	if ph := out.Results[2].Rows; len(ph) != 2 || ph[0]["phase_name"] != "plan" || fmt.Sprint(ph[1]["unpriced"]) != "1" {
		t.Errorf("phase totals = %v, want plan, then review with one unpriced call", ph)
	}
}

// activeParts is the names of conversations' parts, as the tuple
// catchUp binds.
const activeParts = "(SELECT name FROM system.parts WHERE database = currentDatabase() AND table = 'conversations' AND active)"

// sqlArgs renders the array arguments of args for inline.
func sqlArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case []string:
			out[i] = sqlArray(a)
		case []uint32:
			out[i] = sqlArray(a)
		default:
			out[i] = a
		}
	}
	return out
}
