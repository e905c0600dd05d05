package store

import (
	"math"
	"testing"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// planCost reads whole past days from the summaries and only the rest
// live: a partial first day, a partial last day, today.
func TestPlanCost(t *testing.T) {
	day := func(d uint64, h time.Duration) uint64 { return d*schema.DayNS + uint64(h) }
	now := time.Unix(0, int64(day(20, 15*time.Hour)))
	none := [2]uint64{} // the zero range reads nothing
	cases := []struct {
		name           string
		from, to       uint64
		fromDay, toDay uint32
		head, tail     [2]uint64
	}{
		{"midnight to midnight", day(3, 0), day(10, 0), 3, 10, none, none},
		{"partial ends", day(3, 9*time.Hour), day(10, 2*time.Hour), 4, 10, [2]uint64{day(3, 9*time.Hour), day(4, 0)}, [2]uint64{day(10, 0), day(10, 2*time.Hour)}},
		{"up to now: today is live", day(3, 0), uint64(now.UnixNano()), 3, 20, none, [2]uint64{day(20, 0), uint64(now.UnixNano())}},
		{"into the future", day(3, 0), day(30, 0), 3, 20, none, [2]uint64{day(20, 0), day(30, 0)}},
		{"no end", day(3, 0), 0, 3, 20, none, [2]uint64{day(20, 0), math.MaxUint64}},
		{"within a day", day(5, time.Hour), day(5, 2*time.Hour), 0, 0, [2]uint64{day(5, time.Hour), day(5, 2*time.Hour)}, none},
		{"across one midnight", day(5, time.Hour), day(6, 2*time.Hour), 0, 0, [2]uint64{day(5, time.Hour), day(6, 2*time.Hour)}, none},
		{"one whole day", day(5, time.Hour), day(7, 2*time.Hour), 6, 7, [2]uint64{day(5, time.Hour), day(6, 0)}, [2]uint64{day(7, 0), day(7, 2*time.Hour)}},
	}
	for _, c := range cases {
		p := planCost(CostFilter{FromNS: c.from, ToNS: c.to, Project: "p"}, now)
		got := [2][2]uint64{{p.head.FromNS, p.head.ToNS}, {p.tail.FromNS, p.tail.ToNS}}
		if p.fromDay != c.fromDay || p.toDay != c.toDay || got != [2][2]uint64{c.head, c.tail} || p.head.Project != "p" || p.tail.Project != "p" {
			t.Errorf("%s: planCost(%d, %d) = days [%d, %d), head/tail %v (%q, %q); want days [%d, %d), head/tail %v",
				c.name, c.from, c.to, p.fromDay, p.toDay, got, p.head.Project, p.tail.Project, c.fromDay, c.toDay, [2][2]uint64{c.head, c.tail})
		}
	}
}
