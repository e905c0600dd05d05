package viewer_test

import (
	"context"
	"testing"

	"github.com/convtrace/convtrace/store/synth"
)

// BenchmarkReadsByKey measures reads whose answer is small (a trace, an
// export, a status search, a latency report) beside the 10-turn thread's
// rows: table-% shows when one scans again.
func BenchmarkReadsByKey(b *testing.B) {
	h, conn := benchServer(b)
	ctx := context.Background()
	var total uint64
	var trace string
	if err := conn.QueryRow(ctx, "SELECT count(), anyIf(trace_id, thread_id = ?) FROM conversations", synth.Thread10).Scan(&total, &trace); err != nil {
		b.Fatal(err)
	}
	routes := []struct{ name, path string }{
		{"TracePage", "/traces/" + trace},
		{"TraceAPI", "/api/traces/" + trace},
		{"ExportThreadAPI", "/api/threads/" + synth.Thread10 + "/export"},
		{"FilterRunningAPI", "/api/search?status=running"},
		{"Latency90Days", "/api/latency?from=2026-01-01&to=2026-04-01"},
		{"Latency30Days", "/api/latency?from=2026-03-02&to=2026-04-01"},
	}
	var ratios []ratio
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) { benchRoute(b, h, r.path, total) })
		ratios = append(ratios, ratio{r.name, "BaselineThread10Rows", "< 1% of the table"})
	}
	b.Run("BaselineThread10Rows", func(b *testing.B) { benchThreadRows(b, conn, synth.Thread10, 10) })
	printRatios(b, total, ratios)
}
