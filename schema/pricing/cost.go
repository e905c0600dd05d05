package pricing

import "strings"

// Usage is a call's token counts as stored: nil is unknown.
type Usage struct {
	In, Out, CacheRead, CacheWrite, Reasoning *uint32
}

// costTerm is one term of a call's cost: a number of tokens, in Go and as
// the same expression over the conversations columns, times one of a
// Price's rates. Price.Cost and the SQL Reprice runs are both the sum of
// costTerms, so the two cannot drift apart.
type costTerm struct {
	tokens func(Usage) float64
	sql    string
	price  func(Price) float64
}

// costTerms is the one cost rule, over counts stored as schema.InputTokens
// says: input includes cache tokens (unless smaller than them), output
// includes reasoning (unless smaller than it); see docs/design/mapping.md.
var costTerms = []costTerm{
	{
		tokens: func(u Usage) float64 {
			in, cache := val(u.In), val(u.CacheRead)+val(u.CacheWrite)
			if in >= cache {
				return in - cache
			}
			return in
		},
		sql: `if(ifNull(tokens_in, 0) >= ifNull(tokens_cache_read, 0) + ifNull(tokens_cache_write, 0),
         toFloat64(ifNull(tokens_in, 0)) - ifNull(tokens_cache_read, 0) - ifNull(tokens_cache_write, 0),
         toFloat64(ifNull(tokens_in, 0)))`,
		price: func(p Price) float64 { return p.Input },
	},
	{
		tokens: func(u Usage) float64 { return val(u.CacheRead) },
		sql:    `toFloat64(ifNull(tokens_cache_read, 0))`,
		price:  func(p Price) float64 { return p.CacheRead },
	},
	{
		tokens: func(u Usage) float64 { return val(u.CacheWrite) },
		sql:    `toFloat64(ifNull(tokens_cache_write, 0))`,
		price:  func(p Price) float64 { return p.CacheWrite },
	},
	{
		tokens: func(u Usage) float64 {
			out, reasoning := val(u.Out), val(u.Reasoning)
			if reasoning <= out {
				return out - reasoning
			}
			return out
		},
		sql: `if(ifNull(tokens_reasoning, 0) <= ifNull(tokens_out, 0),
         toFloat64(ifNull(tokens_out, 0)) - ifNull(tokens_reasoning, 0),
         toFloat64(ifNull(tokens_out, 0)))`,
		price: func(p Price) float64 { return p.Output },
	},
	{
		tokens: func(u Usage) float64 { return val(u.Reasoning) },
		sql:    `toFloat64(ifNull(tokens_reasoning, 0))`,
		price:  func(p Price) float64 { return p.Reasoning },
	},
}

// CostSQL is Price.Cost as a SQL expression over a conversations row, with
// one ? per term bound by Price.Rates: the server recomputes costs in
// place (store.Reprice) by the same rule as PriceTurn, kept beside it.
var CostSQL = func() string {
	terms := make([]string, len(costTerms))
	for i, t := range costTerms {
		terms[i] = t.sql + " * ?"
	}
	return "(\n    " + strings.Join(terms, "\n  + ") + "\n  ) / 1000000"
}()

// Rates are the rates of p that CostSQL binds.
func (p Price) Rates() []any {
	args := make([]any, len(costTerms))
	for i, t := range costTerms {
		args[i] = t.price(p)
	}
	return args
}

func val(n *uint32) float64 {
	if n == nil {
		return 0
	}
	return float64(*n)
}
