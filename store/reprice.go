package store

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store/ddl"
)

// RepriceRange selects the turns Reprice recomputes: those that started
// in [FromNS, ToNS) of Project ("" = every project).
type RepriceRange struct {
	FromNS, ToNS uint64
	Project      string
}

// Repriced reports what Reprice changed.
type Repriced struct {
	Priced   uint64 // turns given a priced cost
	Unpriced uint64 // turns whose model no longer has a price: cost NULL, source unknown
}

// repriceScope selects the turns in {range} whose cost convtrace computed
// or could not compute; a provided cost is never touched.
const repriceScope = `
WHERE {range}
  AND cost_source IN ('priced', 'unknown')`

const selectRepriceModels = `
SELECT model, count() AS turns
FROM conversations FINAL{scope}
GROUP BY model
ORDER BY model`

// updatePriced sets the cost of the turns of {scope} and {models} in
// {table} (as ddl.Mutator's Table names it) to {cost}, one price's
// pricing.CostSQL; updateUnpriced sets it to unknown.
const (
	updatePriced = `
ALTER TABLE {table} UPDATE cost_usd = toNullable({cost}), cost_source = 'priced'{scope}
  AND has({models}, model)`
	updateUnpriced = `
ALTER TABLE {table} UPDATE cost_usd = CAST(NULL AS Nullable(Float64)), cost_source = 'unknown'{scope}
  AND has({models}, model)`
)

// repriceOf is updatePriced of the models of price e, or updateUnpriced
// when e is nil, in table.
func repriceOf(table string, r RepriceRange, e *pricing.Price, models []string) sqlText {
	p := holes{"table": raw(table), "scope": r.scope(), "models": arg(models)}
	if e == nil {
		return sqlf(updateUnpriced, p)
	}
	p["cost"] = sqlText{pricing.CostSQL, e.Rates()}
	return sqlf(updatePriced, p)
}

// Reprice recomputes with p the cost of the turns in r that convtrace priced,
// or could not price, at ingest; provided costs are kept. It rewrites the cost
// columns in place, waits for it (progress) and brings the range's summaries
// up to date (docs/design/removal.md, "store.Reprice").
func Reprice(ctx context.Context, db DB, p pricing.Prices, r RepriceRange, progress func(mutations, parts uint64)) (Repriced, error) {
	q := sqlf(selectRepriceModels, holes{"scope": r.scope()})
	rows, err := db.Query(ctx, q.text, q.args...)
	if err != nil {
		return Repriced{}, fmt.Errorf("query models to reprice: %w", err)
	}
	byPrice := map[int][]string{}
	var unpriced []string
	var res Repriced
	for rows.Next() {
		var (
			model string
			n     uint64
		)
		if err := rows.Scan(&model, &n); err != nil {
			rows.Close()
			return Repriced{}, fmt.Errorf("scan models to reprice: %w", err)
		}
		if i, ok := p.Index(model); ok {
			byPrice[i] = append(byPrice[i], model)
			res.Priced += n
		} else {
			unpriced = append(unpriced, model)
			res.Unpriced += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Repriced{}, fmt.Errorf("read models to reprice: %w", err)
	}
	m, err := ddl.NewMutator(ctx, db)
	if err != nil {
		return Repriced{}, err
	}
	w, err := Begin(ctx, db, Change{FromNS: r.FromNS, ToNS: r.ToNS, InPlace: true, Project: r.Project})
	if err != nil {
		return Repriced{}, err
	}
	indexes := make([]int, 0, len(byPrice))
	for i := range byPrice {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	for _, i := range indexes {
		e := p.Entry(i)
		q := repriceOf(m.Table("conversations"), r, &e, byPrice[i])
		if err := m.Exec(ctx, db, q.text, q.args...); err != nil {
			return Repriced{}, fmt.Errorf("reprice %s: %w", e.Pattern, err)
		}
	}
	if len(unpriced) > 0 {
		q := repriceOf(m.Table("conversations"), r, nil, unpriced)
		if err := m.Exec(ctx, db, q.text, q.args...); err != nil {
			return Repriced{}, fmt.Errorf("unprice models without a price: %w", err)
		}
	}
	if err := m.Wait(ctx, db, []string{"conversations"}, progress); err != nil {
		return Repriced{}, err
	}
	return res, w.Done(ctx)
}

// scope is repriceScope of r; ToNS 0 is no end.
func (r RepriceRange) scope() sqlText {
	to := r.ToNS
	if to == 0 {
		to = math.MaxUint64
	}
	return sqlf(repriceScope, holes{"range": and(startedIn(r.FromNS, to), ofProject(r.Project))})
}
