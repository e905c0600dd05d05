package viewer

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// WithPrices computes the cache savings of the cost page with p. Without
// it the savings are unknown (—).
func WithPrices(p pricing.Prices) Option { return optionFunc(func(c *config) { c.pricer = p }) }

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

// costTableNames are the tables of the cost page, each grouped by one
// dimension.
var costTableNames = []string{"model", "provider", "phase", "speaker", "agent", "day"}

// costDaysBy groups the report's Days, the data of its charts.
var costDaysBy = []string{"day", "model"}

// CostReport is the data of /cost and /api/cost.
type CostReport struct {
	From    time.Time          `json:"from"`
	To      time.Time          `json:"to"`
	Project string             `json:"project"`
	Totals  store.CostUsage    `json:"totals"`
	Days    store.CostTable    `json:"days"` // by day and model, for the charts
	Tables  []store.CostTable  `json:"tables"`
	Threads []store.CostThread `json:"threads"` // the most expensive, most first
	query   url.Values         // the request's from, to and project
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
func costFilter(c *gin.Context, now time.Time) (store.CostFilter, error) {
	f, err := store.ParseCostRange(c.Query("from"), c.Query("to"), now)
	f.Project = c.Query("project")
	return f, err
}

// costReport reads the report's cells and top threads and folds the cells
// into every table.
func (s *Server) costReport(c *gin.Context) (CostReport, error) {
	f, err := costFilter(c, time.Now())
	if err != nil {
		return CostReport{}, err
	}
	cells, threads, err := s.store.CostData(c.Request.Context(), f, true, topThreads, time.Now())
	if err != nil {
		return CostReport{}, err
	}
	store.AddSavings(cells, s.pricer)
	r := CostReport{
		From: time.Unix(0, int64(f.FromNS)).UTC(), To: time.Unix(0, int64(f.ToNS)).UTC(),
		Project: f.Project, Threads: threads,
	}
	for _, cell := range cells {
		r.Totals.Add(cell.CostUsage)
	}
	if r.Days, err = store.GroupCost(cells, costDaysBy); err != nil {
		return CostReport{}, err
	}
	for _, name := range costTableNames {
		t, err := store.GroupCost(cells, []string{name})
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
		CostChart:  newChart(r.Days, "cost", func(u store.CostUsage) float64 { return store.Deref(u.CostUSD) }, formatUSD),
		TokenChart: newChart(r.Days, "tokens", func(u store.CostUsage) float64 { return float64(store.Deref(u.Tokens())) }, formatTokens),
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
		s.apiError(c, page.BadParam("table", "%q is not one of %s, %s, threads", name, strings.Join(costTableNames, ", "), strings.Join(costDaysBy, "_")))
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
	cells, threads, err := s.store.CostData(c.Request.Context(), f, by != nil, threadLimit, time.Now())
	if err != nil {
		s.apiError(c, err)
		return
	}
	write := func(w io.Writer) error { return store.WriteThreadsCSV(w, threads) }
	if by != nil {
		store.AddSavings(cells, s.pricer)
		t, err := store.GroupCost(cells, by)
		if err != nil {
			s.apiError(c, err)
			return
		}
		write = func(w io.Writer) error { return store.WriteCostCSV(w, t) }
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
	totals, err := s.store.PhaseTotals(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		Phases []store.PhaseTotal `json:"phases"`
	}{totals})
}

// formatUSD and formatTokens label the charts' axes.
func formatUSD(v float64) string { return formatCost(&v) }

func formatTokens(v float64) string {
	n := uint64(v)
	return formatCount(&n)
}
