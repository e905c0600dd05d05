package viewer_test

import (
	"encoding/csv"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// costServer returns a viewer that prices cache savings with the built-in
// table, over a fresh database.
func costServer(t *testing.T) (http.Handler, *topology.Conn) {
	t.Helper()
	conn, _ := testkit.Open(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	return viewer.New(conn, viewer.WithLogger(log), viewer.WithPrices(pricing.DefaultPrices())).Handler(), conn
}

// usage sets a response turn's tokens, cost and cost source.
func usage(r schema.Turn, in, out, cacheRead uint32, cost *float64, source string) schema.Turn {
	r.TokensIn, r.TokensOut, r.TokensCacheRead = u32(in), u32(out), u32(cacheRead)
	r.CostUSD, r.CostSource = cost, source
	return r
}

// costFixture is two threads over two days: priced, provided and unpriced
// calls, with cache reads on gpt-5.
func costFixture() []schema.Turn {
	const day = 24 * 3600
	p1, r1 := call("th-a", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, "plan", "the plan")
	p2, r2 := call("th-a", "s2", "review", 0, "critic", "anthropic", "claude-sonnet-4-5", 10, "review", "ok")
	p3, r3 := call("th-b", "s3", "plan", 0, "planner", "openai", "gpt-5", day, "plan b", "plan b")
	p4, r4 := call("th-b", "s4", "execute", 0, "coder", "local", "qwen2.5-coder:32b", day+10, "run", "done")
	return []schema.Turn{
		p1, usage(r1, 1_000_000, 100_000, 800_000, f64(1.35), schema.CostPriced),
		p2, usage(r2, 1000, 500, 0, f64(2), schema.CostProvided),
		p3, usage(r3, 2000, 1000, 0, f64(0.0125), schema.CostPriced),
		p4, usage(r4, 50, 50, 0, nil, schema.CostUnknown),
	}
}

type costReport struct {
	Totals struct {
		Calls       uint64   `json:"calls"`
		TokensIn    *uint64  `json:"tokens_in"`
		CacheRead   *uint64  `json:"tokens_cache_read"`
		CostUSD     *float64 `json:"cost_usd"`
		Unpriced    uint64   `json:"unpriced_calls"`
		CacheSaving *float64 `json:"cache_savings_usd"`
	} `json:"totals"`
	Days struct {
		Rows []costRow `json:"rows"`
	} `json:"days"`
	Tables []struct {
		Name string    `json:"name"`
		Rows []costRow `json:"rows"`
	} `json:"tables"`
	Threads []struct {
		ThreadID string   `json:"thread_id"`
		CostUSD  *float64 `json:"cost_usd"`
	} `json:"threads"`
}

type costRow struct {
	Key     []string `json:"key"`
	Calls   uint64   `json:"calls"`
	CostUSD *float64 `json:"cost_usd"`
}

// summary is what the tests compare of a report: every total and row.
func (r costReport) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "totals calls=%d in=%s cache=%s cost=%s unpriced=%d savings=%s\n", r.Totals.Calls,
		showU(r.Totals.TokensIn), showU(r.Totals.CacheRead), showF(r.Totals.CostUSD), r.Totals.Unpriced, showF(r.Totals.CacheSaving))
	for _, row := range r.Days.Rows {
		fmt.Fprintf(&b, "day_model %v calls=%d cost=%s\n", row.Key, row.Calls, showF(row.CostUSD))
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			fmt.Fprintf(&b, "%s %v calls=%d cost=%s\n", t.Name, row.Key, row.Calls, showF(row.CostUSD))
		}
	}
	for _, th := range r.Threads {
		fmt.Fprintf(&b, "thread %s cost=%s\n", th.ThreadID, showF(th.CostUSD))
	}
	return b.String()
}

func showU(p *uint64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func showF(p *float64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%.6f", *p)
}

// costPath asks for the fixture's range: both of its days.
func costPath(base, extra string) string {
	from := time.Unix(0, int64(at(0))).UTC().Format(time.RFC3339)
	to := time.Unix(0, int64(at(3*24*3600))).UTC().Format(time.RFC3339)
	return base + "?from=" + from + "&to=" + to + extra
}

func TestCostReport(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)

	var r costReport
	getJSON(t, h, costPath("/api/cost", ""), http.StatusOK, &r)
	// gpt-5 saved 800k cache-read tokens × (1.25 − 0.125) $/M = $0.90.
	want := `totals calls=4 in=1003050 cache=800000 cost=3.362500 unpriced=1 savings=0.900000
day_model [2026-05-01 claude-sonnet-4-5] calls=1 cost=2.000000
day_model [2026-05-01 gpt-5] calls=1 cost=1.350000
day_model [2026-05-02 gpt-5] calls=1 cost=0.012500
day_model [2026-05-02 qwen2.5-coder:32b] calls=1 cost=NULL
model [claude-sonnet-4-5] calls=1 cost=2.000000
model [gpt-5] calls=2 cost=1.362500
model [qwen2.5-coder:32b] calls=1 cost=NULL
provider [anthropic] calls=1 cost=2.000000
provider [openai] calls=2 cost=1.362500
provider [local] calls=1 cost=NULL
phase [review] calls=1 cost=2.000000
phase [plan] calls=2 cost=1.362500
phase [execute] calls=1 cost=NULL
speaker [critic] calls=1 cost=2.000000
speaker [planner] calls=2 cost=1.362500
speaker [coder] calls=1 cost=NULL
agent [] calls=4 cost=3.362500
day [2026-05-01] calls=2 cost=3.350000
day [2026-05-02] calls=2 cost=0.012500
thread th-a cost=3.350000
thread th-b cost=0.012500
`
	if got := r.summary(); got != want {
		t.Errorf("GET /api/cost:\n got:\n%s\nwant:\n%s", got, want)
	}
}

// Delivering the same batch twice (a retry, a replay, a re-import) changes
// no total: not the report, not the CSVs, not a thread's phase totals, not
// the threads list.
func TestCostDoubleDeliveryChangesNoTotal(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	snapshot := func() string {
		var b strings.Builder
		var r costReport
		getJSON(t, h, costPath("/api/cost", ""), http.StatusOK, &r)
		b.WriteString(r.summary())
		for _, table := range []string{"model", "phase", "day_model", "threads"} {
			b.WriteString(get(t, h, costPath("/api/cost/csv", "&table="+table)).body)
		}
		b.WriteString(get(t, h, "/api/threads/th-a/cost").body)
		var threads struct {
			Threads []struct {
				ID      string   `json:"thread_id"`
				Turns   uint64   `json:"turns"`
				Tokens  *uint64  `json:"tokens"`
				CostUSD *float64 `json:"cost_usd"`
			} `json:"threads"`
		}
		getJSON(t, h, "/api/threads", http.StatusOK, &threads)
		for _, th := range threads.Threads {
			fmt.Fprintf(&b, "list %s turns=%d tokens=%s cost=%s\n", th.ID, th.Turns, showU(th.Tokens), showF(th.CostUSD))
		}
		return b.String()
	}
	before := snapshot()
	testkit.InsertTurns(t, conn, costFixture()...) // the same batch again, no merge in between
	var parts uint64
	if err := conn.QueryRow(t.Context(), "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'conversations' AND active").Scan(&parts); err != nil {
		t.Fatal(err)
	}
	if parts < 2 {
		t.Fatalf("%d active parts: the copies were merged before the check", parts)
	}
	if after := snapshot(); after != before {
		t.Errorf("totals changed after a second delivery:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Every table of /cost downloads as CSV that parses, with a header and
// one record per row of the JSON twin.
func TestCostCSV(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	cases := []struct {
		table      string
		wantHeader string
		wantFirst  string
		wantRows   int
	}{
		{"model", "model,calls,tokens_in,tokens_out,tokens_cache_read,tokens_cache_write,tokens_reasoning,cost_usd,unpriced_calls,cache_savings_usd",
			"claude-sonnet-4-5,1,1000,500,0,,,2,0,0", 3},
		{"phase", "phase,calls", "review,1", 3},
		{"provider", "provider,calls", "anthropic,1", 3},
		{"speaker", "speaker,calls", "critic,1", 3},
		{"agent", "agent,calls", ",4,1003050,101550,800000,,,3.3625,1,0.9", 1},
		{"day", "day,calls", "2026-05-01,2", 2},
		{"day_model", "day,model,calls", "2026-05-01,claude-sonnet-4-5,1", 4},
		{"threads", "thread_id,project,calls", "th-a,proj,2,1001000,100500,800000,,,3.35,0,", 2},
	}
	for _, c := range cases {
		res := get(t, h, costPath("/api/cost/csv", "&table="+c.table))
		if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") {
			t.Errorf("table %s: status %d, Content-Type %q; body:\n%s", c.table, res.status, res.header.Get("Content-Type"), res.body)
			continue
		}
		records, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil {
			t.Errorf("table %s: parse CSV: %v\n%s", c.table, err, res.body)
			continue
		}
		header, first := strings.Join(records[0], ","), ""
		if len(records) > 1 {
			first = strings.Join(roundDollars(records[1]), ",")
		}
		if !strings.HasPrefix(header, c.wantHeader) || !strings.HasPrefix(first, c.wantFirst) || len(records)-1 != c.wantRows {
			t.Errorf("table %s: header %q, first record %q, %d records;\nwant header %q…, first %q…, %d records", c.table,
				header, first, len(records)-1, c.wantHeader, c.wantFirst, c.wantRows)
		}
	}
	if res := get(t, h, "/api/cost/csv?table=nope"); res.status != http.StatusBadRequest || !strings.Contains(res.body, "table") {
		t.Errorf("unknown table: status %d, body %s; want 400 naming table", res.status, res.body)
	}
}

// roundDollars rounds a record's decimal fields (dollars) to nine places,
// so that a sum's float noise (3.3625000000000003) compares as its value.
func roundDollars(record []string) []string {
	out := slices.Clone(record)
	for i, f := range out {
		if v, err := strconv.ParseFloat(f, 64); err == nil && strings.Contains(f, ".") {
			out[i] = strconv.FormatFloat(math.Round(v*1e9)/1e9, 'f', -1, 64)
		}
	}
	return out
}

func TestThreadCostByPhase(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	cases := []struct{ thread, want string }{
		{"th-a", "plan calls=1 in=1000000 cost=1.350000 unpriced=0|review calls=1 in=1000 cost=2.000000 unpriced=0|"},
		{"th-b", "plan calls=1 in=2000 cost=0.012500 unpriced=0|execute calls=1 in=50 cost=NULL unpriced=1|"},
		{"nope", ""},
	}
	for _, c := range cases {
		var body struct {
			Phases []struct {
				Phase    string   `json:"phase"`
				Calls    uint64   `json:"calls"`
				TokensIn *uint64  `json:"tokens_in"`
				CostUSD  *float64 `json:"cost_usd"`
				Unpriced uint64   `json:"unpriced_calls"`
			} `json:"phases"`
		}
		getJSON(t, h, "/api/threads/"+c.thread+"/cost", http.StatusOK, &body)
		var got strings.Builder
		for _, p := range body.Phases {
			fmt.Fprintf(&got, "%s calls=%d in=%s cost=%s unpriced=%d|", p.Phase, p.Calls, showU(p.TokensIn), showF(p.CostUSD), p.Unpriced)
		}
		if got.String() != c.want {
			t.Errorf("GET /api/threads/%s/cost:\n got %s\nwant %s", c.thread, got.String(), c.want)
		}
	}
}

// A thread's phase totals group phases as its page does, case- and
// space-insensitively, and come in the page's phase order: canonical
// phases first, then the others as they began.
func TestThreadCostPhasesFoldCase(t *testing.T) {
	h, conn := costServer(t)
	p1, r1 := call("th-c", "c1", "design", 0, "planner", "openai", "gpt-5", 0, "design", "d")
	p2, r2 := call("th-c", "c2", "Plan", 0, "planner", "openai", "gpt-5", 10, "plan", "p")
	p3, r3 := call("th-c", "c3", "review", 0, "critic", "openai", "gpt-5", 20, "review", "r")
	p4, r4 := call("th-c", "c4", "plan", 1, "planner", "openai", "gpt-5", 30, "plan again", "p2")
	p5, r5 := call("th-c", "c5", " plan", 2, "planner", "openai", "gpt-5", 40, "plan more", "p3")
	testkit.InsertTurns(t, conn,
		p1, usage(r1, 100, 10, 0, f64(0.5), schema.CostPriced),
		p2, usage(r2, 1000, 100, 0, f64(1.25), schema.CostPriced),
		p3, usage(r3, 10, 1, 0, f64(0.125), schema.CostPriced),
		p4, usage(r4, 2000, 200, 0, f64(2.5), schema.CostProvided),
		p5, usage(r5, 30, 3, 0, nil, schema.CostUnknown))
	var body struct {
		Phases []struct {
			Phase    string   `json:"phase"`
			Calls    uint64   `json:"calls"`
			TokensIn *uint64  `json:"tokens_in"`
			CostUSD  *float64 `json:"cost_usd"`
			Unpriced uint64   `json:"unpriced_calls"`
		} `json:"phases"`
	}
	getJSON(t, h, "/api/threads/th-c/cost", http.StatusOK, &body)
	var got strings.Builder
	for _, p := range body.Phases {
		name := p.Phase
		if strings.EqualFold(strings.TrimSpace(name), "plan") {
			name = "plan" // any spelling of the group may name it
		}
		fmt.Fprintf(&got, "%s calls=%d in=%s cost=%s unpriced=%d|", name, p.Calls, showU(p.TokensIn), showF(p.CostUSD), p.Unpriced)
	}
	want := "plan calls=3 in=3030 cost=3.750000 unpriced=1|review calls=1 in=10 cost=0.125000 unpriced=0|" +
		"design calls=1 in=100 cost=0.500000 unpriced=0|"
	if got.String() != want {
		t.Errorf("GET /api/threads/th-c/cost:\n got %s\nwant %s", got.String(), want)
	}
}

func TestCostPage(t *testing.T) {
	h, conn := costServer(t)
	testkit.InsertTurns(t, conn, costFixture()...)
	res := get(t, h, costPath("/cost", "&project=proj"))
	if res.status != http.StatusOK {
		t.Fatalf("GET /cost: status %d\n%s", res.status, res.body)
	}
	for _, want := range []string{
		`<span class="value" id="cost-total">$3.3625</span>`,
		`<svg class="chart"`, `<rect class="bar m0 s0"`, `data-series="s0"`,
		`<title>2026-05-01 gpt-5: $1.35</title>`,
		`<a href="/threads/th-a">th-a</a>`,
		`href="/api/cost/csv?from=2026-05-01T09%3A00%3A00Z&amp;project=proj&amp;table=model&amp;to=2026-05-04T09%3A00%3A00Z"`,
		`<td class="num">$0.90</td>`, // gpt-5's cache savings
		`<td class="num">79.8%</td>`, // gpt-5's cache hit rate: 800k of 1,002,000
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("GET /cost lacks %s\n%s", want, res.body)
		}
	}
	if other := get(t, h, costPath("/cost", "&project=other")); !strings.Contains(other.body, "No calls with tokens or cost") {
		t.Errorf("GET /cost of another project shows data:\n%s", other.body)
	}
	for _, bad := range []struct{ query, field string }{{"?from=yesterday", "from"}, {"?from=1d&to=2020-01-01", "to"}} {
		if r := get(t, h, "/api/cost"+bad.query); r.status != http.StatusBadRequest || !strings.Contains(r.body, bad.field) {
			t.Errorf("GET /api/cost%s: status %d, body %s; want 400 naming %s", bad.query, r.status, r.body, bad.field)
		}
	}
}

// The default range starts at UTC midnight 30 days back, a whole day the
// summaries answer; a from given is kept as given.
func TestParseCostRangeDefault(t *testing.T) {
	now := time.Date(2026, 5, 31, 15, 4, 5, 0, time.FixedZone("UTC+10", 10*3600)) // 05:04:05 UTC
	cases := []struct{ from, wantFrom string }{
		{"", "2026-05-01T00:00:00Z"},
		{"  ", "2026-05-01T00:00:00Z"},
		{"30d", "2026-05-01T05:04:05Z"},
		{"2026-05-20T12:00", "2026-05-20T12:00:00Z"},
	}
	for _, c := range cases {
		f, err := store.ParseCostRange(c.from, "", now)
		got := time.Unix(0, int64(f.FromNS)).UTC().Format(time.RFC3339)
		if err != nil || got != c.wantFrom || f.ToNS != uint64(now.UnixNano()) {
			t.Errorf("ParseCostRange(%q, \"\", %v) = from %s, to %d, %v; want from %s, to %d", c.from, now, got, f.ToNS, err, c.wantFrom, now.UnixNano())
		}
	}
}
