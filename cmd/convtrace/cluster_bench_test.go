package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/synth"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/viewer"
)

// BenchmarkCluster is what README "Scaling out" reports a cluster costs:
// a 2 shards × 2 replicas cluster on this machine, CONVTRACE_BENCH_TURNS
// synthetic turns (ten million by default) written through its
// Distributed tables, the bytes each replica then stores, and the
// viewer's threads list, a 200-turn thread page and the cost report of
// the turns' 90 days, each asked twice (the first refreshes the
// summaries). Run only with CONVTRACE_BENCH=1: it takes minutes.
func BenchmarkCluster(b *testing.B) {
	if os.Getenv("CONVTRACE_BENCH") == "" {
		b.Skip("set CONVTRACE_BENCH=1 to generate the turns and measure the cluster")
	}
	c, conn, _ := testkit.OpenCluster(b)
	ctx := context.Background()
	turns := testkit.BenchTurns(b, 10_000_000)
	began := time.Now()
	sum, err := synth.Generate(ctx, conn, synth.Config{Turns: turns})
	if err != nil {
		b.Fatal(err)
	}
	generated := time.Since(began)
	fmt.Printf("cluster: %d turns in %d threads written in %s (%.0f turns/s)\n", sum.Turns, sum.Threads,
		generated.Round(time.Millisecond), float64(sum.Turns)/generated.Seconds())
	for i := range c.Servers() {
		var bytes, rows uint64
		if err := clusterConn(b, c, i).QueryRow(ctx, `SELECT sum(bytes_on_disk), sumIf(rows, table = 'conversations_local')
FROM system.parts WHERE active AND database = 'convtrace'`).Scan(&bytes, &rows); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("server %d (shard %d): %d turns, %.1f MiB on disk, %.0f bytes a turn\n",
			i+1, i/2+1, rows, float64(bytes)/(1<<20), float64(bytes)/float64(max(rows, 1)))
	}
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	for _, path := range []string{"/api/threads", "/api/threads/" + synth.Thread200 + "/turns", "/threads/" + synth.Thread200,
		"/api/cost?from=2026-01-01&to=2026-04-01"} {
		for _, pass := range []string{"first", "again"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = "127.0.0.1:8080"
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, req)
			took := time.Since(start)
			if rec.Code != http.StatusOK {
				body, _ := io.ReadAll(rec.Body)
				b.Fatalf("GET %s: %d %.300s", path, rec.Code, body)
			}
			fmt.Printf("GET %s, %s: %s\n", path, pass, took.Round(time.Millisecond))
		}
	}
}
