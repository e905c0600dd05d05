package viewer

import (
	"cmp"
	"encoding/csv"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// CachePricer prices what prompt caching saved: what cacheRead tokens of a
// model would have cost as uncached input, minus what they cost. ok is
// false for a model without a price. pricing.Prices satisfies it.
type CachePricer interface {
	CacheSavings(model string, cacheRead uint64) (usd float64, ok bool)
}

// WithPrices computes the cache savings of the cost page with p. Without
// it the savings are unknown (—).
func WithPrices(p CachePricer) Option { return optionFunc(func(c *config) { c.pricer = p }) }

// costRoutes serves the cost page, its JSON twin, its tables as CSV and a
// thread's totals by phase.
func (s *Server) costRoutes(app, api *gin.RouterGroup) {
	app.GET("/cost", s.costPage)
	api.GET("/cost", s.apiCost)
	api.GET("/cost/csv", s.apiCostCSV)
	api.GET("/threads/:id/cost", s.apiThreadCost)
}

// topThreads is how many of the most expensive threads a report lists.
const topThreads = 10

// defaultCostFrom is where a cost report starts when from is not given:
// UTC midnight 30 days back, a whole first day that the summaries answer,
// where "30d" would start mid-day and read that day live on every request.
func defaultCostFrom(now time.Time) string {
	return now.UTC().AddDate(0, 0, -30).Format(time.DateOnly)
}

// CostDimensions are the names GroupCost groups by, in the order of
// CostCell's fields.
var CostDimensions = []string{"day", "model", "provider", "phase", "speaker", "agent"}

// costTableNames are the tables of the cost page, each grouped by one
// dimension.
var costTableNames = []string{"model", "provider", "phase", "speaker", "agent", "day"}

// costDaysBy groups the report's Days, the data of its charts.
var costDaysBy = []string{"day", "model"}

func (c CostCell) dimension(name string) string {
	switch name {
	case "day":
		return c.Day
	case "model":
		return c.Model
	case "provider":
		return c.Provider
	case "phase":
		return c.Phase
	case "speaker":
		return c.Speaker
	case "agent":
		return c.Agent
	}
	return ""
}

// CostTable is a cost report's usage grouped by the dimensions By, one row
// per distinct key, most expensive first (by day: oldest first).
type CostTable struct {
	Name string      `json:"name"`
	By   []string    `json:"by"`
	Rows []CostGroup `json:"rows"`
}

// CostGroup is one row of a CostTable: the values of the table's
// dimensions and the group's usage.
type CostGroup struct {
	Key []string `json:"key"`
	CostUsage
}

// GroupCost folds cells into a table grouped by the dimensions by (names
// of CostDimensions); an unknown name is a *ParamError for the field "by".
func GroupCost(cells []CostCell, by []string) (CostTable, error) {
	for _, d := range by {
		if !slices.Contains(CostDimensions, d) {
			return CostTable{}, badParam("by", "%q is not one of %s", d, strings.Join(CostDimensions, ", "))
		}
	}
	t := CostTable{Name: strings.Join(by, "_"), By: by, Rows: []CostGroup{}}
	index := map[string]int{}
	for _, c := range cells {
		key := make([]string, len(by))
		for i, d := range by {
			key[i] = c.dimension(d)
		}
		id := strings.Join(key, "\x00")
		i, ok := index[id]
		if !ok {
			i = len(t.Rows)
			index[id] = i
			t.Rows = append(t.Rows, CostGroup{Key: key})
		}
		t.Rows[i].Add(c.CostUsage)
	}
	byDay := len(by) > 0 && by[0] == "day"
	slices.SortStableFunc(t.Rows, func(a, b CostGroup) int {
		if !byDay {
			if c := compareCost(a.CostUSD, b.CostUSD); c != 0 {
				return c
			}
		}
		return slices.Compare(a.Key, b.Key)
	})
	return t, nil
}

// compareCost orders the most expensive first and unknown costs last.
func compareCost(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*b, *a)
}

// Add adds o's usage to u; a sum stays nil (unknown) while neither side
// knows it.
func (u *CostUsage) Add(o CostUsage) {
	u.Calls += o.Calls
	u.Unpriced += o.Unpriced
	u.TokensIn = addKnown(u.TokensIn, o.TokensIn)
	u.TokensOut = addKnown(u.TokensOut, o.TokensOut)
	u.CacheRead = addKnown(u.CacheRead, o.CacheRead)
	u.CacheWrite = addKnown(u.CacheWrite, o.CacheWrite)
	u.Reasoning = addKnown(u.Reasoning, o.Reasoning)
	u.CostUSD = addKnown(u.CostUSD, o.CostUSD)
	u.CacheSavingsUSD = addKnown(u.CacheSavingsUSD, o.CacheSavingsUSD)
}

// deref is a chart's value of a sum: 0 when unknown.
func deref[T uint64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// HitRate is the share of input tokens read from the cache as a
// percentage, — when either count is unknown or there was no input. Input
// includes the cache tokens (schema.InputTokens); rows stored before that
// rule may hold less, so the input is at least the cache tokens and the
// rate never passes 100%.
func (u CostUsage) HitRate() string {
	if u.TokensIn == nil || u.CacheRead == nil || *u.TokensIn == 0 {
		return unknown
	}
	in := max(*u.TokensIn, *u.CacheRead+deref(u.CacheWrite))
	return strconv.FormatFloat(100*float64(*u.CacheRead)/float64(in), 'f', 1, 64) + "%"
}

// Tokens is input plus output tokens, nil when neither is known.
func (u CostUsage) Tokens() *uint64 { return addKnown(u.TokensIn, u.TokensOut) }

// addSavings sets the cache savings of each cell whose model has a price
// and whose calls read from the cache.
func addSavings(cells []CostCell, p CachePricer) {
	if p == nil {
		return
	}
	for i := range cells {
		c := &cells[i]
		if c.CacheRead == nil {
			continue
		}
		if usd, ok := p.CacheSavings(c.Model, *c.CacheRead); ok {
			c.CacheSavingsUSD = &usd
		}
	}
}

// CostReport is the data of /cost and /api/cost.
type CostReport struct {
	From    time.Time    `json:"from"`
	To      time.Time    `json:"to"`
	Project string       `json:"project"`
	Totals  CostUsage    `json:"totals"`
	Days    CostTable    `json:"days"` // by day and model, for the charts
	Tables  []CostTable  `json:"tables"`
	Threads []CostThread `json:"threads"` // the most expensive, most first
	query   url.Values   // the request's from, to and project
}

// CSVURL is the address of one of the report's tables as CSV, over the
// same range and project.
func (r CostReport) CSVURL(table string) string {
	q := url.Values{"table": {table}}
	for k, v := range r.query {
		q[k] = v
	}
	return "/api/cost/csv?" + q.Encode()
}

// costFilter reads the from, to and project parameters.
func costFilter(c *gin.Context, now time.Time) (CostFilter, error) {
	f, err := ParseCostRange(c.Query("from"), c.Query("to"), now)
	f.Project = c.Query("project")
	return f, err
}

// ParseCostRange reads the range of a cost report as the cost page does:
// from and to are times (RFC 3339, 2006-01-02T15:04, a date) or ages such
// as 24h or 7d; from defaults to UTC midnight 30 days before now, to to
// now. A bad value is a *ParamError naming from or to.
func ParseCostRange(from, to string, now time.Time) (CostFilter, error) {
	if strings.TrimSpace(from) == "" {
		from = defaultCostFrom(now)
	}
	fromNS, toNS, err := timeRange(from, to, now)
	if err != nil {
		return CostFilter{}, err
	}
	if toNS == 0 {
		toNS = uint64(now.UnixNano())
	}
	if toNS < fromNS {
		return CostFilter{}, badParam("from", "%q is after now", from)
	}
	return CostFilter{FromNS: fromNS, ToNS: toNS}, nil
}

// costReport reads the report's cells and top threads and folds the cells
// into every table.
func (s *Server) costReport(c *gin.Context) (CostReport, error) {
	f, err := costFilter(c, time.Now())
	if err != nil {
		return CostReport{}, err
	}
	cells, threads, err := s.store.costData(c.Request.Context(), f, true, topThreads, time.Now())
	if err != nil {
		return CostReport{}, err
	}
	addSavings(cells, s.pricer)
	r := CostReport{
		From: time.Unix(0, int64(f.FromNS)).UTC(), To: time.Unix(0, int64(f.ToNS)).UTC(),
		Project: f.Project, Threads: threads,
	}
	for _, cell := range cells {
		r.Totals.Add(cell.CostUsage)
	}
	if r.Days, err = GroupCost(cells, costDaysBy); err != nil {
		return CostReport{}, err
	}
	for _, name := range costTableNames {
		t, err := GroupCost(cells, []string{name})
		if err != nil {
			return CostReport{}, err
		}
		r.Tables = append(r.Tables, t)
	}
	r.query = url.Values{}
	for _, k := range []string{"from", "to", "project"} {
		if v, ok := c.GetQuery(k); ok {
			r.query.Set(k, v)
		}
	}
	return r, nil
}

// costPage renders /cost: totals, the charts, the tables and the most
// expensive threads.
func (s *Server) costPage(c *gin.Context) {
	r, err := s.costReport(c)
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "cost.html", costPageData{
		CostReport: r,
		FromValue:  c.DefaultQuery("from", r.From.Format(time.DateOnly)),
		ToValue:    c.Query("to"),
		CostChart:  newChart(r.Days, "cost", func(u CostUsage) float64 { return deref(u.CostUSD) }, formatUSD),
		TokenChart: newChart(r.Days, "tokens", func(u CostUsage) float64 { return float64(deref(u.Tokens())) }, formatTokens),
	})
}

type costPageData struct {
	CostReport
	FromValue, ToValue    string
	CostChart, TokenChart chart
}

// apiCost answers GET /api/cost?from=&to=&project=: the data of /cost.
func (s *Server) apiCost(c *gin.Context) {
	r, err := s.costReport(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, r)
}

// apiCostCSV answers GET /api/cost/csv?table=NAME&from=&to=&project=: one
// table of /cost as CSV, NAME one of the tables' names, day_model or
// threads.
func (s *Server) apiCostCSV(c *gin.Context) {
	name := c.Query("table")
	var by []string // nil: the threads
	switch {
	case name == "threads":
	case name == strings.Join(costDaysBy, "_"):
		by = costDaysBy
	case slices.Contains(costTableNames, name):
		by = []string{name}
	default:
		s.apiError(c, badParam("table", "%q is not one of %s, %s, threads", name, strings.Join(costTableNames, ", "), strings.Join(costDaysBy, "_")))
		return
	}
	f, err := costFilter(c, time.Now())
	if err != nil {
		s.apiError(c, err)
		return
	}
	threadLimit := 0
	if by == nil {
		threadLimit = topThreads
	}
	cells, threads, err := s.store.costData(c.Request.Context(), f, by != nil, threadLimit, time.Now())
	if err != nil {
		s.apiError(c, err)
		return
	}
	write := func(w io.Writer) error { return writeThreadsCSV(w, threads) }
	if by != nil {
		addSavings(cells, s.pricer)
		t, err := GroupCost(cells, by)
		if err != nil {
			s.apiError(c, err)
			return
		}
		write = func(w io.Writer) error { return WriteCostCSV(w, t) }
	}
	c.Header("Content-Disposition", `attachment; filename="cost-`+name+`.csv"`)
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Status(http.StatusOK)
	if err := write(c.Writer); err != nil {
		s.log.ErrorContext(c.Request.Context(), "viewer: write cost csv", "err", err)
	}
}

// apiThreadCost answers GET /api/threads/:id/cost: {"phases": [...]}, the
// thread's usage by phase, the data of the thread page's cost partial.
func (s *Server) apiThreadCost(c *gin.Context) {
	totals, err := s.store.phaseTotals(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		Phases []PhaseTotal `json:"phases"`
	}{totals})
}

// costCSVColumns are the usage columns of every cost CSV, after the key.
var costCSVColumns = []string{"calls", "tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write",
	"tokens_reasoning", "cost_usd", "unpriced_calls", "cache_savings_usd"}

// WriteCostCSV writes t as CSV: a header of its dimensions and the usage
// columns, then one record per row. Unknown values are empty fields.
func WriteCostCSV(w io.Writer, t CostTable) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(t.By), costCSVColumns...)); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(csvCells(append(slices.Clone(r.Key), r.Record()...))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCells neutralises cells a spreadsheet would run as a formula (a model,
// speaker or thread name starting with = + - @, a tab or a carriage
// return) by putting a quote before them, as OWASP advises for CSV
// injection; numbers never start so.
func csvCells(cells []string) []string {
	for i, c := range cells {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			cells[i] = "'" + c
		}
	}
	return cells
}

func writeThreadsCSV(w io.Writer, threads []CostThread) error {
	t := CostTable{By: []string{"thread_id", "project"}}
	for _, th := range threads {
		t.Rows = append(t.Rows, CostGroup{Key: []string{th.ThreadID, th.Project}, CostUsage: th.CostUsage})
	}
	return WriteCostCSV(w, t)
}

// Record is the usage in the order of costCSVColumns, for CSV: exact
// numbers, "" when unknown.
func (u CostUsage) Record() []string {
	count := func(p *uint64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatUint(*p, 10)
	}
	usd := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	return []string{strconv.FormatUint(u.Calls, 10), count(u.TokensIn), count(u.TokensOut), count(u.CacheRead),
		count(u.CacheWrite), count(u.Reasoning), usd(u.CostUSD), strconv.FormatUint(u.Unpriced, 10), usd(u.CacheSavingsUSD)}
}

// FormatCount writes n with thousands separators (1,234,567), as every
// page shows counts.
func FormatCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatUSD and formatTokens label the charts' axes.
func formatUSD(v float64) string { return formatCost(&v) }

func formatTokens(v float64) string {
	n := uint64(v)
	return formatCount(&n)
}
