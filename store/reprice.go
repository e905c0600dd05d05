package store

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/convtrace/convtrace/schema"
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

// repriceScope selects the turns whose cost convtrace computed or could
// not compute; a provided cost is never touched.
const repriceScope = `
WHERE ts >= toDateTime(?) AND ts <= toDateTime(?)
  AND start_ns >= ? AND start_ns < ?
  AND (? = '' OR project = ?)
  AND cost_source IN ('priced', 'unknown')`

const selectRepriceModels = `
SELECT model, count() AS turns
FROM conversations FINAL` + repriceScope + `
GROUP BY model
ORDER BY model`

// updatePriced sets the cost of the turns of some models from one price,
// in the table %s names (ddl.Mutator's Table).
var updatePriced = `ALTER TABLE %s UPDATE cost_usd = toNullable(` + pricing.CostSQL + `), cost_source = 'priced'` +
	repriceScope + ` AND has(?, model)`

const updateUnpriced = `ALTER TABLE %s UPDATE cost_usd = CAST(NULL AS Nullable(Float64)), cost_source = 'unknown'` +
	repriceScope + ` AND has(?, model)`

// Reprice recomputes with p the cost of the turns in r that convtrace
// priced, or could not price, at ingest: after a price change, or once an
// unknown model has a price. Provided costs are kept.
//
// It updates the rows in place with ALTER TABLE … UPDATE mutations, one per
// price: the server rewrites only the cost columns of the parts concerned,
// with no content crossing the network, and copies of a turn delivered
// twice stay identical. Reprice waits for them, calling progress with the
// mutations and parts still to do, and brings the summaries of the range
// up to date (Begin, Done).
func Reprice(ctx context.Context, db DB, p pricing.Prices, r RepriceRange, progress func(mutations, parts uint64)) (Repriced, error) {
	scope := r.args()
	rows, err := db.Query(ctx, selectRepriceModels, scope...)
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
		args := append(e.Rates(), scope...)
		if err := m.Exec(ctx, db, fmt.Sprintf(updatePriced, m.Table("conversations")), append(args, byPrice[i])...); err != nil {
			return Repriced{}, fmt.Errorf("reprice %s: %w", e.Pattern, err)
		}
	}
	if len(unpriced) > 0 {
		if err := m.Exec(ctx, db, fmt.Sprintf(updateUnpriced, m.Table("conversations")), append(scope, unpriced)...); err != nil {
			return Repriced{}, fmt.Errorf("unprice models without a price: %w", err)
		}
	}
	if err := m.Wait(ctx, db, []string{"conversations"}, progress); err != nil {
		return Repriced{}, err
	}
	return res, w.Done(ctx)
}

// args are the bound arguments of repriceScope; ToNS 0 is no end.
func (r RepriceRange) args() []any {
	to := r.ToNS
	if to == 0 {
		to = math.MaxUint64
	}
	fromSec, toSec := schema.TSBounds(r.FromNS, to)
	return []any{fromSec, toSec, r.FromNS, to, r.Project, r.Project}
}
