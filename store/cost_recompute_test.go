package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/topology"
)

// copyBeforeSum is a real connection that, just before the first summary
// of days summed as they are, delivers a call again: the copy lands after
// its day was found to have none, and is summed twice.
// It notes the days each summary with copies folded covers.
type copyBeforeSum struct {
	*topology.Conn
	t      *testing.T
	again  *schema.Turn // nil: deliver nothing
	once   sync.Once
	mu     sync.Mutex
	folded [][]uint32
}

func (c *copyBeforeSum) Exec(ctx context.Context, query string, args ...any) error {
	if strings.Contains(query, "INSERT INTO cost_daily") {
		if strings.Contains(query, "FINAL") {
			c.mu.Lock()
			c.folded = append(c.folded, args[len(args)-1].([]uint32))
			c.mu.Unlock()
		} else if c.again != nil {
			c.once.Do(func() { testkit.InsertTurns(c.t, c.Conn, *c.again) })
		}
	}
	return c.Conn.Exec(ctx, query, args...)
}

// Days are summed from their rows as they are, and those with copies
// again with the copies folded: the report counts each call once. When a
// copy lands while the days are summed, every day of the run is folded.
func TestCostRecomputeFoldsCopies(t *testing.T) {
	day := func(d int) uint64 { return uint64(time.Date(2026, 5, d, 12, 0, 0, 0, time.UTC).UnixNano()) }
	call := func(id string, at uint64, cost float64) schema.Turn {
		tu := turnAt("th", id, at, cost)
		tu.CostSource = schema.CostPriced
		return tu
	}
	a, b, c := call("a", day(1), 1), call("b", day(2), 2), call("c", day(3), 4)
	d1, d3 := uint32(day(1)/schema.DayNS), uint32(day(3)/schema.DayNS)
	for _, tc := range []struct {
		name   string
		again  *schema.Turn
		folded string
	}{
		{"c delivered twice", nil, fmt.Sprint([][]uint32{{d3}})},
		{"and b again while summing", &b, fmt.Sprint([][]uint32{{d1, d1 + 1, d3}})},
	} {
		conn, _ := testkit.Open(t)
		ctx := context.Background()
		if err := conn.Exec(ctx, "SYSTEM STOP MERGES conversations"); err != nil {
			t.Fatal(err)
		}
		testkit.InsertTurns(t, conn, a, b, c, c)
		db := &copyBeforeSum{Conn: conn, t: t, again: tc.again}
		s := New(db, 100, time.Minute)
		from, to := uint64(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano()), uint64(time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC).UnixNano())
		cells, _, err := s.CostData(ctx, CostFilter{FromNS: from, ToNS: to}, true, 10, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cell := range cells {
			got = append(got, fmt.Sprintf("%s calls=%d cost=%v", cell.Day, cell.Calls, optionalCost(cell.CostUSD)))
		}
		if want := "[2026-05-01 calls=1 cost=1 2026-05-02 calls=1 cost=2 2026-05-03 calls=1 cost=4]"; fmt.Sprint(got) != want {
			t.Errorf("%s: cells = %v, want %s", tc.name, got, want)
		}
		if got := fmt.Sprint(db.folded); got != tc.folded {
			t.Errorf("%s: days folded %s, want %s", tc.name, got, tc.folded)
		}
	}
}

// A range of decades reads every day's summary version: a query longer
// than ClickHouse's default 256 KiB, which the report allows itself.
func TestCostOverDecades(t *testing.T) {
	conn, _ := testkit.Open(t)
	at := uint64(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	tu := turnAt("th", "a", at, 1.5)
	tu.CostSource = schema.CostPriced
	testkit.InsertTurns(t, conn, tu)
	s := New(conn, 100, time.Minute)
	from := uint64(time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	to := uint64(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	cells, threads, err := s.CostData(context.Background(), CostFilter{FromNS: from, ToNS: to}, true, 10, time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("cost over 36 years: %v", err)
	}
	if len(cells) != 1 || cells[0].Calls != 1 || optionalCost(cells[0].CostUSD) != "1.5" || len(threads) != 1 {
		t.Errorf("cells %+v, threads %+v; want the one call of $1.5", cells, threads)
	}
}
