package viewer

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
)

// latencyRoutes serves the latency page and its JSON twin.
func (s *Server) latencyRoutes(app, api *gin.RouterGroup) {
	app.GET("/latency", s.latencyPage)
	api.GET("/latency", s.apiLatency)
}

// latencyEstimator names how the report's percentiles are computed.
const latencyEstimator = "exact (ClickHouse quantilesExact: the floor(level·n)-th of the n values sorted, 0-based)"

// LatencyReport is the data of /latency and /api/latency: the latency of
// the calls that ended in [From, To) and pass the filters, all of them
// (All, nil when there is none) and grouped by each dimension asked for.
type LatencyReport struct {
	From      time.Time            `json:"from"`
	To        time.Time            `json:"to"`
	Project   string               `json:"project"`
	Model     string               `json:"model"`
	Provider  string               `json:"provider"`
	Phase     string               `json:"phase"`
	Speaker   string               `json:"speaker"`
	Estimator string               `json:"estimator"`
	All       *store.LatencyGroup  `json:"all"`
	Tables    []store.LatencyTable `json:"tables"`
}

// latencyReport reads from, to, the filters and group_by (dimensions,
// repeated or comma-separated; every one when absent) and runs the report.
func (s *Server) latencyReport(c *gin.Context) (LatencyReport, error) {
	f, err := store.ParseLatencyRange(c.Query("from"), c.Query("to"), time.Now())
	if err != nil {
		return LatencyReport{}, err
	}
	f.Project, f.Model, f.Provider = c.Query("project"), c.Query("model"), c.Query("provider")
	f.Phase, f.Speaker = c.Query("phase"), c.Query("speaker")
	var by []string
	for _, v := range c.QueryArray("group_by") {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				by = append(by, d)
			}
		}
	}
	all, tables, err := s.store.Latency(c.Request.Context(), f, by)
	if err != nil {
		return LatencyReport{}, err
	}
	return LatencyReport{
		From: time.Unix(0, int64(f.FromNS)).UTC(), To: time.Unix(0, int64(f.ToNS)).UTC(),
		Project: f.Project, Model: f.Model, Provider: f.Provider, Phase: f.Phase, Speaker: f.Speaker,
		Estimator: latencyEstimator, All: all, Tables: tables,
	}, nil
}

// apiLatency answers GET /api/latency?from=&to=&project=&model=&provider=
// &phase=&speaker=&group_by=: the data of /latency.
func (s *Server) apiLatency(c *gin.Context) {
	r, err := s.latencyReport(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, r)
}

// latencyPage renders /latency: the range and filters, every call's
// figures, then a table per dimension.
func (s *Server) latencyPage(c *gin.Context) {
	r, err := s.latencyReport(c)
	if err != nil {
		s.pageError(c, err)
		return
	}
	data := latencyPageData{LatencyReport: r, FromValue: c.DefaultQuery("from", "7d"), ToValue: c.Query("to")}
	if r.All != nil {
		row := latencyRowOf(*r.All)
		data.Total = &row
	}
	for _, t := range r.Tables {
		table := latencyTableView{By: t.By}
		for _, g := range t.Rows {
			table.Rows = append(table.Rows, latencyRowOf(g))
		}
		data.Views = append(data.Views, table)
	}
	s.html(c, http.StatusOK, "latency.html", data)
}

type latencyPageData struct {
	LatencyReport
	FromValue, ToValue string
	Total              *latencyRow
	Views              []latencyTableView
}

// Levels are the percentiles of every row's cells, in their order.
func (latencyPageData) Levels() []string { return []string{"50", "95", "99"} }

type latencyTableView struct {
	By   string
	Rows []latencyRow
}

// latencyRow is a LatencyGroup as the page shows it.
type latencyRow struct {
	Key            string
	Calls, Failed  uint64
	ErrorRate      string
	Duration, TTFT []latencyCell // p50, p95, p99; TTFT empty when unknown
	TTFTCalls      uint64
}

// latencyCell is one percentile: its exact value, kept in the page for
// scripts and tests, and its text.
type latencyCell struct {
	NS   uint64
	Text string
}

func latencyRowOf(g store.LatencyGroup) latencyRow {
	r := latencyRow{Key: g.Key, Calls: g.Calls, Failed: g.Failed, TTFTCalls: g.TTFTCalls,
		ErrorRate: formatRate(g.ErrorRate), Duration: latencyCells(g.Duration)}
	if g.TTFT != nil {
		r.TTFT = latencyCells(*g.TTFT)
	}
	return r
}

func latencyCells(p store.Percentiles) []latencyCell {
	cells := make([]latencyCell, 0, 3)
	for _, ns := range []uint64{p.P50, p.P95, p.P99} {
		cells = append(cells, latencyCell{NS: ns, Text: latencyText(ns)})
	}
	return cells
}

// latencyText writes a percentile as the thread page writes a duration,
// and 0 as 0s: a figure, not a call that has not ended.
func latencyText(ns uint64) string {
	if ns == 0 {
		return "0s"
	}
	return formatDuration(ns)
}

// formatRate writes a share as a percentage with one decimal.
func formatRate(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }
