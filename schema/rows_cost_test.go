package schema_test

import (
	"math"
	"strconv"
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

// The ts bounds hold every turn of the range, and stay within DateTime.
func TestTSBounds(t *testing.T) {
	cases := []struct{ fromNS, toNS, wantFrom, wantTo uint64 }{
		{0, 0, 0, 1},
		{1_500_000_000, 2_000_000_000, 1, 3},
		{2_999_999_999, 3_000_000_001, 2, 4},
		{5_000_000_000, math.MaxUint64, 5, 1<<32 - 1},
	}
	for _, c := range cases {
		if from, to := schema.TSBounds(c.fromNS, c.toNS); from != c.wantFrom || to != c.wantTo {
			t.Errorf("TSBounds(%d, %d) = %d, %d; want %d, %d", c.fromNS, c.toNS, from, to, c.wantFrom, c.wantTo)
		}
	}
}

// DaySQL is DayNS as the cost queries write it.
func TestDaySQL(t *testing.T) {
	if got := strconv.FormatUint(schema.DayNS, 10); got != schema.DaySQL {
		t.Errorf("DayNS is %s, DaySQL %s", got, schema.DaySQL)
	}
}
