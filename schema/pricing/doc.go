// Package pricing owns what a call costs: the price table (prices.yaml,
// or a user's file over it), the one cost rule (costTerms), pricing a turn
// at ingest (Prices.PriceTurn), and the same rule as SQL (CostSQL), with
// which store.Reprice recomputes stored costs in place after a price change.
//
// Its place in the whole is described in docs/architecture.md.
package pricing
