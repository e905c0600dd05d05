package viewer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/convtrace/convtrace/viewer"
)

// BenchmarkLatencyAPI measures GET /api/latency beside GET /api/cost over
// the same ranges of the synthetic turns (a million unless
// CONVTRACE_BENCH_TURNS says otherwise; synth's 90 days from 2026-01-01),
// both warm (their day summaries current): the ratios show what merging
// the latency states costs beside summing the cost cells.
func BenchmarkLatencyAPI(b *testing.B) {
	conn := benchConn(b)
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	var total uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&total); err != nil {
		b.Fatal(err)
	}
	ranges := []struct{ name, query string }{
		{"90Days", "?from=2026-01-01&to=2026-04-01"},
		{"30Days", "?from=2026-03-02&to=2026-04-01"},
		{"7Days", "?from=2026-03-25&to=2026-04-01"},
	}
	var ratios []ratio
	for _, r := range ranges {
		b.Run("Cost"+r.name, func(b *testing.B) {
			checkCost(b, h, "/api/cost"+r.query)
			timeOps(b, nil, func() { serveOK(b, h, "/api/cost"+r.query) })
			reportRowsRead(b, rowsRead(h, "/api/cost"+r.query), total)
		})
		b.Run("Latency"+r.name, func(b *testing.B) {
			var report struct {
				All struct {
					Calls uint64 `json:"calls"`
				} `json:"all"`
			}
			if err := json.Unmarshal(serveOK(b, h, "/api/latency"+r.query).Body.Bytes(), &report); err != nil || report.All.Calls == 0 {
				b.Fatalf("/api/latency%s: %d calls (%v): the benchmark measures an empty report", r.query, report.All.Calls, err)
			}
			timeOps(b, nil, func() { serveOK(b, h, "/api/latency"+r.query) })
			reportRowsRead(b, rowsRead(h, "/api/latency"+r.query), total)
		})
		ratios = append(ratios, ratio{"Latency" + r.name, "Cost" + r.name, "not much slower than the cost report"})
	}
	printRatios(b, total, ratios)
}
