package schema_test

import (
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// A turn written with a blank cost source gets the column DEFAULT's.
func TestTurnCostSourceDefault(t *testing.T) {
	n, cost := uint32(5), 0.25
	cases := []struct {
		turn schema.Turn
		want string
	}{
		{schema.Turn{CostSource: schema.CostPriced, CostUSD: &cost}, schema.CostPriced},
		{schema.Turn{CostUSD: &cost}, schema.CostProvided},
		{schema.Turn{TokensOut: &n}, schema.CostUnknown},
		{schema.Turn{}, ""},
	}
	col := -1
	for i, c := range schema.TurnColumns {
		if c == "cost_source" {
			col = i
		}
	}
	for _, c := range cases {
		if got := c.turn.Values()[col]; got != c.want {
			t.Errorf("Values() of %+v: cost_source %q, want %q", c.turn, got, c.want)
		}
	}
}
