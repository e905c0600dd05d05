// Package pricing owns what a call costs: the price table (prices.yaml,
// or a user's file over it), the one cost rule (costTerms), pricing a turn
// at ingest (Prices.PriceTurn) and recomputing stored costs in place after
// a price change (Reprice), with SQL generated from the same rule.
//
// Its place in the whole is described in docs/architecture.md.
package pricing
