package viewer_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/synth"
)

// costFacts is what the rollup tests compare of a report: its day × model
// cells, its totals and its top threads.
type costFacts struct {
	cells   []costFact // by day and model, in order
	threads []costFact // most expensive first
}

// costFact is one row: a key, exact counts and a cost compared within
// rounding (sums of floats in another order).
type costFact struct {
	key      string
	calls    uint64
	tokensIn string
	unpriced uint64
	cost     *float64
}

func (f costFact) String() string {
	return fmt.Sprintf("%s calls=%d in=%s unpriced=%d cost=%s", f.key, f.calls, f.tokensIn, f.unpriced, showF(f.cost))
}

// diff describes how got differs from want, "" when they agree.
func (want costFacts) diff(got costFacts) string {
	var b strings.Builder
	cmp := func(name string, g, w []costFact) {
		if len(g) != len(w) {
			fmt.Fprintf(&b, "%s: got %d rows, want %d\n got %v\nwant %v\n", name, len(g), len(w), g, w)
			return
		}
		for i := range g {
			same := g[i].key == w[i].key && g[i].calls == w[i].calls && g[i].tokensIn == w[i].tokensIn && g[i].unpriced == w[i].unpriced
			switch {
			case g[i].cost == nil || w[i].cost == nil:
				same = same && g[i].cost == nil && w[i].cost == nil
			default:
				same = same && math.Abs(*g[i].cost-*w[i].cost) <= 1e-9*math.Max(1, math.Abs(*w[i].cost))
			}
			if !same {
				fmt.Fprintf(&b, "%s row %d:\n got %v\nwant %v\n", name, i, g[i], w[i])
			}
		}
	}
	cmp("cells", got.cells, want.cells)
	cmp("threads", got.threads, want.threads)
	return b.String()
}

// rollupReport is the part of /api/cost the rollup tests read.
type rollupReport struct {
	Days struct {
		Rows []struct {
			Key      []string `json:"key"`
			Calls    uint64   `json:"calls"`
			TokensIn *uint64  `json:"tokens_in"`
			Unpriced uint64   `json:"unpriced_calls"`
			CostUSD  *float64 `json:"cost_usd"`
		} `json:"rows"`
	} `json:"days"`
	Threads []struct {
		ThreadID string   `json:"thread_id"`
		Calls    uint64   `json:"calls"`
		TokensIn *uint64  `json:"tokens_in"`
		Unpriced uint64   `json:"unpriced_calls"`
		CostUSD  *float64 `json:"cost_usd"`
	} `json:"threads"`
}

// reportFacts asks /api/cost for [from, to) of project.
func reportFacts(t *testing.T, h http.Handler, from, to time.Time, project string) costFacts {
	t.Helper()
	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}, "project": {project}}
	var r rollupReport
	getJSON(t, h, "/api/cost?"+q.Encode(), http.StatusOK, &r)
	var f costFacts
	for _, row := range r.Days.Rows {
		f.cells = append(f.cells, costFact{strings.Join(row.Key, " "), row.Calls, showU(row.TokensIn), row.Unpriced, row.CostUSD})
	}
	for _, th := range r.Threads {
		f.threads = append(f.threads, costFact{th.ThreadID, th.Calls, showU(th.TokensIn), th.Unpriced, th.CostUSD})
	}
	return f
}

// finalFacts computes what reportFacts should find straight from
// conversations FINAL, the way the report read it before the rollup.
func finalFacts(t *testing.T, conn driver.Conn, from, to time.Time, project string) costFacts {
	t.Helper()
	const where = `
FROM conversations FINAL
WHERE start_ns >= ? AND start_ns < ? AND (? = '' OR project = ?) AND cost_source != ''`
	args := []any{uint64(from.UnixNano()), uint64(to.UnixNano()), project, project}
	read := func(query string, key func(a, b string) string) []costFact {
		rows, err := conn.Query(context.Background(), query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		var facts []costFact
		for rows.Next() {
			var (
				a, b string
				f    costFact
				in   *uint64
			)
			if err := rows.Scan(&a, &b, &f.calls, &in, &f.unpriced, &f.cost); err != nil {
				t.Fatal(err)
			}
			f.key, f.tokensIn = key(a, b), showU(in)
			facts = append(facts, f)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return facts
	}
	return costFacts{
		cells: read(`SELECT toString(toDate(toDateTime(intDiv(start_ns, 1000000000), 'UTC'))) AS d, CAST(model AS String) AS m,
       count(), sum(tokens_in), countIf(cost_source = 'unknown'), sum(cost_usd)`+where+`
GROUP BY d, m ORDER BY d, m`, func(a, b string) string { return a + " " + b }),
		threads: read(`SELECT thread_id, '', count(), sum(tokens_in), countIf(cost_source = 'unknown'), sum(cost_usd) AS c`+where+`
GROUP BY thread_id ORDER BY c DESC, thread_id LIMIT 10`, func(a, _ string) string { return a }),
	}
}

// costVersions returns the current summary version of each day.
func costVersions(t *testing.T, conn driver.Conn) map[string]uint64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT day, max(computed_ns) FROM cost_days GROUP BY day`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	versions := map[string]uint64{}
	for rows.Next() {
		var (
			day uint32
			v   uint64
		)
		if err := rows.Scan(&day, &v); err != nil {
			t.Fatal(err)
		}
		versions[time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly)] = v
	}
	return versions
}

// The report read through the summaries equals the report computed
// straight from conversations FINAL, for ranges on and off midnight, of
// one project or all, when the summaries are first computed and when they
// are read again.
func TestCostRollupMatchesFinal(t *testing.T) {
	h, conn := costServer(t)
	ctx := context.Background()
	day0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, cfg := range []synth.Config{
		{Turns: 30_000, Threads: 60, Project: "alpha", Start: day0, Days: 6},
		{Turns: 6_000, Threads: 20, Project: "beta", Start: day0.Add(2*24*time.Hour + 6*time.Hour), Days: 3},
	} {
		if _, err := synth.Generate(ctx, conn, cfg); err != nil {
			t.Fatal(err)
		}
	}
	at := func(d, h, m int) time.Time {
		return day0.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	cases := []struct {
		name     string
		from, to time.Time
		project  string
	}{
		{"whole days, every project", at(-1, 0, 0), at(9, 0, 0), ""},
		{"whole days, one project", at(0, 0, 0), at(7, 0, 0), "alpha"},
		{"partial ends", at(0, 9, 30), at(4, 17, 45), ""},
		{"partial ends, other project", at(2, 1, 0), at(5, 23, 59), "beta"},
		{"overlapping the first range", at(1, 0, 0), at(3, 12, 0), ""},
		{"within one day", at(2, 3, 0), at(2, 20, 0), ""},
		{"across one midnight", at(2, 12, 0), at(3, 12, 0), "alpha"},
		{"a project with no turns", at(0, 0, 0), at(7, 0, 0), "nobody"},
	}
	for _, c := range cases {
		want := finalFacts(t, conn, c.from, c.to, c.project)
		for _, pass := range []string{"first", "again"} {
			got := reportFacts(t, h, c.from, c.to, c.project)
			if d := want.diff(got); d != "" {
				t.Errorf("%s (%s .. %s, project %q), %s request:\n%s", c.name, c.from, c.to, c.project, pass, d)
			}
		}
		if len(want.cells) == 0 && c.project != "nobody" {
			t.Errorf("%s: no cells in the range: the case tests nothing", c.name)
		}
	}
	// Every whole past day of a range asked for has a state, and those
	// with turns have their sums.
	if v := costVersions(t, conn); len(v) != 10 {
		t.Errorf("summarized days %v: want the 10 whole days asked for", v)
	}
	var days uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(day) FROM cost_daily").Scan(&days); err != nil {
		t.Fatal(err)
	}
	if days != 6 {
		t.Errorf("cost_daily holds %d days, want the 6 days of the turns", days)
	}
}

// A batch delivered again changes no total, and the days it touched are
// recomputed (a new version); a merge folding the copies changes none
// either and inserts no row, so it recomputes nothing; a request with
// nothing new reads the summaries as they are.
func TestCostRollupDoubleDeliveryAndMerge(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	from, to := time.Unix(0, int64(at(0))), time.Unix(0, int64(at(3*24*3600)))
	const summarized = "2026-05-02" // the fixture's second day; the first starts after midnight and is read live

	want := finalFacts(t, conn, from, to, "")
	check := func(step string) map[string]uint64 {
		t.Helper()
		if d := want.diff(reportFacts(t, h, from, to, "")); d != "" {
			t.Errorf("%s:\n%s", step, d)
		}
		v := costVersions(t, conn)
		if v[summarized] == 0 {
			t.Fatalf("%s: no summary of %s: %v", step, summarized, v)
		}
		return v
	}
	first := check("first report")
	if again := check("same data"); again[summarized] != first[summarized] {
		t.Errorf("same data: version %d, want %d (the summary read as it is)", again[summarized], first[summarized])
	}

	testkit.InsertTurns(t, conn, costFixture()...) // the same batch again, no merge in between
	redelivered := check("after the second delivery")
	if redelivered[summarized] == first[summarized] {
		t.Errorf("after the second delivery: version %d unchanged, want a recompute", first[summarized])
	}
	if err := conn.Exec(context.Background(), "OPTIMIZE TABLE conversations FINAL"); err != nil {
		t.Fatal(err)
	}
	var copies uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&copies); err != nil {
		t.Fatal(err)
	}
	if copies != uint64(len(costFixture())) {
		t.Fatalf("%d rows after OPTIMIZE FINAL, want %d: the copies were not folded", copies, len(costFixture()))
	}
	if merged := check("after the merge"); merged[summarized] != redelivered[summarized] {
		t.Errorf("after the merge: version %d, want %d (nothing recomputed)", merged[summarized], redelivered[summarized])
	}
}

// A turn landing on a summarized day is in the next report.
func TestCostRollupNewTurnAppears(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	from, to := time.Unix(0, int64(at(0))), time.Unix(0, int64(at(3*24*3600)))
	before := reportFacts(t, h, from, to, "")

	p, r := call("th-c", "s5", "plan", 0, "planner", "openai", "gpt-5", 24*3600+600, "late", "late")
	testkit.InsertTurns(t, conn, p, usage(r, 10, 10, 0, f64(7), schema.CostProvided))
	got := reportFacts(t, h, from, to, "")
	if d := finalFacts(t, conn, from, to, "").diff(got); d != "" {
		t.Errorf("after a new turn:\n%s", d)
	}
	if len(got.threads) != len(before.threads)+1 || got.threads[0].key != "th-c" {
		t.Errorf("threads after a new turn costing $7: %v, want th-c first, then %v", got.threads, before.threads)
	}
}

// convtrace reprice changes costs but not the fingerprint of a day: it
// invalidates the repriced days, and the next report has the new costs.
func TestCostRollupReprice(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	from, to := time.Unix(0, int64(at(0))), time.Unix(0, int64(at(3*24*3600)))
	before := reportFacts(t, h, from, to, "")

	prices, err := pricing.ParsePrices([]byte("prices:\n  - {pattern: 'gpt-5', input: 2, output: 20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Reprice(context.Background(), conn, prices,
		store.RepriceRange{FromNS: uint64(from.UnixNano()), ToNS: uint64(to.UnixNano())}, nil); err != nil {
		t.Fatal(err)
	}
	want := finalFacts(t, conn, from, to, "")
	if d := want.diff(before); d == "" {
		t.Fatalf("reprice changed no cost: the test tests nothing")
	}
	if d := want.diff(reportFacts(t, h, from, to, "")); d != "" {
		t.Errorf("after reprice:\n%s", d)
	}
}

// Concurrent cold reports of one range recompute each day once: they
// share the recompute, or find it done, and all answer the same.
func TestCostRollupConcurrentColdReports(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	const n = 6
	var (
		wg     sync.WaitGroup
		status [n]int
		bodies [n]string
	)
	for i := range n {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, newRequest(http.MethodGet, costPath("/api/cost", ""), nil))
			status[i], bodies[i] = rec.Code, rec.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		if status[i] != http.StatusOK || bodies[i] != bodies[0] {
			t.Errorf("report %d: status %d, body\n%s\nwant 200 and the body of report 0:\n%s", i, status[i], bodies[i], bodies[0])
		}
	}
	for _, table := range []string{"cost_days", "cost_daily", "cost_thread_daily"} {
		rows, err := conn.Query(context.Background(), `SELECT day, uniqExact(computed_ns) FROM `+table+` GROUP BY day ORDER BY day`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var (
				day      uint32
				versions uint64
			)
			if err := rows.Scan(&day, &versions); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s:%d", time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly), versions))
		}
		rows.Close()
		// The fixture's first day starts after midnight and is read live;
		// the second day is summarized, the third has no turns: a state
		// says so, and no sums.
		want := "[2026-05-02:1]"
		if table == "cost_days" {
			want = "[2026-05-02:1 2026-05-03:1]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s: versions per day %v, want %s", table, got, want)
		}
	}
}
