package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/viewer"
)

// costBenchTurns is how many turns BenchmarkCostAPI10M wants: issue 6 asks
// for the /api/cost server time over ten million.
const costBenchTurns = 10_000_000

// BenchmarkCostAPI10M measures GET /api/cost over ten million synthetic
// turns (synth's 90 days from 2026-01-01, one project), each op one request
// through the handler, and reports the median of the ops (median-ms) beside
// the mean, and the rows one more request reads (rows-read, table-%).
// Warm: the summaries are current, as on every request after the first.
// Cold: the summaries are dropped before each op, so the request
// recomputes every day. Baselines in the same run: the per-day fingerprint
// that warm requests read before issue 13 (now they read none), a plain
// count, and the report's one aggregation straight from conversations
// FINAL (the report before the summaries).
//
// It generates the turns on first use (minutes) unless CONVTRACE_BENCH_DSN
// names a database that already holds them; see benchConn.
// CONVTRACE_BENCH_TURNS may ask for fewer, to try the benchmark out.
func BenchmarkCostAPI10M(b *testing.B) {
	if os.Getenv(benchTurnsEnv) == "" {
		b.Setenv(benchTurnsEnv, strconv.Itoa(costBenchTurns))
	}
	conn := benchConn(b)
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler)), viewer.WithPrices(pricing.DefaultPrices())).Handler()
	const (
		all     = "/api/cost?from=2026-01-01&to=2026-04-01"
		partial = "/api/cost?from=2026-01-01T12:00&to=2026-03-31T12:00"
	)
	requests := []struct{ name, path string }{
		{"All90Days", all},
		{"OneProject", all + "&project=" + synth.DefaultProject},
		{"Last30Days", "/api/cost?from=2026-03-02&to=2026-04-01"},
		{"PartialDays", partial}, // half a day read live at each end
	}
	var total uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&total); err != nil {
		b.Fatal(err)
	}
	for _, r := range requests {
		b.Run(r.name, func(b *testing.B) {
			checkCost(b, h, r.path) // computes the summaries the ops then read
			timeOps(b, nil, func() { serveOK(b, h, r.path) })
			reportRowsRead(b, rowsRead(h, r.path), total)
		})
	}
	b.Run("ColdAll90Days", func(b *testing.B) {
		drop := func() {
			for _, table := range []string{"cost_daily", "cost_thread_daily", "cost_days"} {
				if err := conn.Exec(context.Background(), "TRUNCATE TABLE "+table); err != nil {
					b.Fatal(err)
				}
			}
		}
		checkCost(b, h, all)
		timeOps(b, drop, func() { serveOK(b, h, all) })
		drop()
		reportRowsRead(b, rowsRead(h, all), total)
	})

	from, to := uint64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()), uint64(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	window := []any{from / 1e9, to / 1e9, from, to}
	// The per-day fingerprint warm requests read before issue 13, and the
	// report's aggregation from conversations FINAL.
	const (
		fingerprint = `
SELECT toUInt32(intDiv(start_ns, 86400000000000)) AS d, count(), sum(start_ns)
FROM conversations
PREWHERE ts >= toDateTime(?) AND ts < toDateTime(?)
GROUP BY d
ORDER BY d`
		finalCells = `
SELECT intDiv(start_ns, 86400000000000) AS d, model, provider, phase, speaker, agent,
       count(), sum(tokens_in), sum(tokens_out), sum(tokens_cache_read), sum(tokens_cache_write),
       sum(tokens_reasoning), sum(cost_usd), countIf(cost_source = 'unknown')
FROM conversations FINAL
WHERE ts >= toDateTime(?) AND ts < toDateTime(?) AND start_ns >= ? AND start_ns < ? AND cost_source != ''
GROUP BY d, model, provider, phase, speaker, agent`
	)
	b.Run("BaselineFingerprint", func(b *testing.B) {
		timeOps(b, nil, func() {
			benchRows(b, conn, fingerprint, window[:2]...)
		})
		reportBaselineRows(b, queryRowsRead(b, conn, fingerprint, window[:2]...))
	})
	b.Run("BaselineCount", func(b *testing.B) {
		timeOps(b, nil, func() { benchRows(b, conn, "SELECT count() FROM conversations") })
		reportBaselineRows(b, queryRowsRead(b, conn, "SELECT count() FROM conversations"))
	})
	b.Run("BaselineFinalCells", func(b *testing.B) {
		timeOps(b, nil, func() {
			benchRows(b, conn, finalCells, window...)
		})
		reportBaselineRows(b, queryRowsRead(b, conn, finalCells, window...))
	})
	// The README's cost by phase: over the cost_cells view (the summaries
	// are current: the requests above made them so, as serve does), as it
	// was with FINAL, and without FINAL, which is fast but counts a copy
	// twice.
	const byPhase = `
SELECT phase, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, round(sum(cost_usd), 6) AS cost
FROM %s
GROUP BY phase ORDER BY cost DESC`
	b.Run("ReadmeCostByPhase", func(b *testing.B) {
		timeOps(b, nil, func() { benchRows(b, conn, fmt.Sprintf(byPhase, "cost_cells")) })
		reportRowsRead(b, queryRowsRead(b, conn, fmt.Sprintf(byPhase, "cost_cells")), total)
	})
	b.Run("CostByPhaseFinal", func(b *testing.B) {
		timeOps(b, nil, func() { benchRows(b, conn, fmt.Sprintf(byPhase, "conversations FINAL")) })
		reportRowsRead(b, queryRowsRead(b, conn, fmt.Sprintf(byPhase, "conversations FINAL")), total)
	})
	b.Run("BaselineCostByPhaseNoFinal", func(b *testing.B) {
		timeOps(b, nil, func() { benchRows(b, conn, fmt.Sprintf(byPhase, "conversations")) })
		reportBaselineRows(b, queryRowsRead(b, conn, fmt.Sprintf(byPhase, "conversations")))
	})
	printRatios(b, total, []ratio{
		{"All90Days", "BaselineFingerprint", "< 1% of the table"},
		{"OneProject", "BaselineFingerprint", "< 1% of the table"},
		{"Last30Days", "BaselineFingerprint", "< 1% of the table"},
		{"PartialDays", "BaselineFingerprint", "—"},
		{"ColdAll90Days", "BaselineFinalCells", "≤ 2 s"},
		{"ReadmeCostByPhase", "BaselineCostByPhaseNoFinal", "exact, ≤ 0.5 s"},
		{"CostByPhaseFinal", "BaselineCostByPhaseNoFinal", "(the README's before)"},
	})
}

// timeOps runs setup (when set, untimed) and op once per iteration and
// reports the median time of op in milliseconds: one slow op on a shared
// machine moves the mean, not the median.
func timeOps(b *testing.B, setup, op func()) {
	var times []time.Duration
	for b.Loop() {
		if setup != nil {
			b.StopTimer()
			setup()
			b.StartTimer()
		}
		began := time.Now()
		op()
		times = append(times, time.Since(began))
	}
	b.ReportMetric(float64(median(times))/1e6, "median-ms")
	record(b, median(times))
}

// serveOK asks the handler for path and checks only the status: decoding
// the report would be timed with it. checkCost, untimed, checks the body.
func serveOK(b *testing.B, h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: status %d; body:\n%.2000s", path, rec.Code, rec.Body.String())
	}
	return rec
}

// checkCost asks the handler for path once and checks the report covers
// calls, so the timed ops do not measure an empty report.
func checkCost(b *testing.B, h http.Handler, path string) {
	rec := serveOK(b, h, path)
	var r struct {
		Totals struct {
			Calls uint64 `json:"calls"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Totals.Calls == 0 {
		b.Fatalf("GET %s: %d calls (%v): the benchmark measures an empty report", path, r.Totals.Calls, err)
	}
}

// queryRowsRead runs a query and returns the rows ClickHouse read for it.
func queryRowsRead(b *testing.B, conn driver.Conn, query string, args ...any) uint64 {
	var read atomic.Uint64
	benchRowsIn(countRowsRead(context.Background(), &read), b, conn, query, args...)
	return read.Load()
}

// benchRows runs a query and reads all its rows.
func benchRows(b *testing.B, conn driver.Conn, query string, args ...any) {
	benchRowsIn(context.Background(), b, conn, query, args...)
}

// benchRowsIn is benchRows with a context.
func benchRowsIn(ctx context.Context, b *testing.B, conn driver.Conn, query string, args ...any) {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		b.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		b.Fatalf("%s: %d rows (%v)", query, n, err)
	}
}
