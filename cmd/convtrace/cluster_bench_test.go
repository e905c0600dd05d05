package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/viewer"
)

// BenchmarkCluster is what README "Scaling out" reports a cluster costs:
// a 2 shards × 2 replicas cluster on this machine and, in the same run, one
// server, each with CONVTRACE_BENCH_TURNS synthetic turns (ten million by
// default), the bytes each replica stores, and the viewer's threads list,
// a 200-turn thread page and the cost report of the turns' 90 days: asked
// once (the first refreshes the summaries), then warm, with the rows a
// warm request reads and the cluster's time over one server's. Run only
// with CONVTRACE_BENCH=1: it takes minutes.
func BenchmarkCluster(b *testing.B) {
	if os.Getenv("CONVTRACE_BENCH") == "" {
		b.Skip("set CONVTRACE_BENCH=1 to generate the turns and measure the cluster")
	}
	c, conn, _ := testkit.OpenCluster(b)
	single, _ := testkit.Open(b)
	ctx := context.Background()
	turns := testkit.BenchTurns(b, 10_000_000)
	for _, target := range []struct {
		name string
		conn driver.Conn
	}{{"cluster", conn}, {"one server", single}} {
		began := time.Now()
		sum, err := synth.Generate(ctx, target.conn, synth.Config{Turns: turns})
		if err != nil {
			b.Fatal(err)
		}
		generated := time.Since(began)
		fmt.Printf("%s: %d turns in %d threads written in %s (%.0f turns/s)\n", target.name, sum.Turns, sum.Threads,
			generated.Round(time.Millisecond), float64(sum.Turns)/generated.Seconds())
	}
	for i := range c.Servers() {
		var bytes, rows uint64
		if err := clusterConn(b, c, i).QueryRow(ctx, `SELECT sum(bytes_on_disk), sumIf(rows, table = 'conversations_local')
FROM system.parts WHERE active AND database = 'convtrace'`).Scan(&bytes, &rows); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("server %d (shard %d): %d turns, %.1f MiB on disk, %.0f bytes a turn\n",
			i+1, i/2+1, rows, float64(bytes)/(1<<20), float64(bytes)/float64(max(rows, 1)))
	}
	quiet := viewer.WithLogger(slog.New(slog.DiscardHandler))
	onCluster := viewer.New(conn, quiet, viewer.WithReplicas((&storage{conn: conn}).replicaDialer())).Handler()
	onOne := viewer.New(single, quiet).Handler()
	fmt.Printf("%-44s %10s %10s %10s %10s %8s %12s %12s\n", "GET", "cluster 1st", "one 1st", "cluster", "one", "ratio", "rows cluster", "rows one")
	for _, path := range []string{"/api/threads", "/api/threads/" + synth.Thread200 + "/turns", "/threads/" + synth.Thread200,
		"/api/cost?from=2026-01-01&to=2026-04-01"} {
		clusterFirst, _ := timeGet(b, onCluster, path)
		oneFirst, _ := timeGet(b, onOne, path)
		// Warm: the median of five, side by side.
		var clusterWarm, oneWarm []time.Duration
		var clusterRows, oneRows uint64
		for range 5 {
			d, n := timeGet(b, onCluster, path)
			clusterWarm, clusterRows = append(clusterWarm, d), n
			d, n = timeGet(b, onOne, path)
			oneWarm, oneRows = append(oneWarm, d), n
		}
		cw, ow := median(clusterWarm), median(oneWarm)
		fmt.Printf("%-44s %10s %10s %10s %10s %7.2f× %12d %12d\n", path, clusterFirst.Round(time.Millisecond),
			oneFirst.Round(time.Millisecond), cw.Round(time.Millisecond), ow.Round(time.Millisecond),
			float64(cw)/float64(ow), clusterRows, oneRows)
	}
}

// timeGet serves GET path once and returns how long it took and the rows
// ClickHouse read for it, on every server it asked.
func timeGet(b *testing.B, h http.Handler, path string) (time.Duration, uint64) {
	var read atomic.Uint64
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:8080"
	req = req.WithContext(clickhouse.Context(req.Context(), clickhouse.WithProgress(func(p *clickhouse.Progress) { read.Add(p.Rows) })))
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	took := time.Since(start)
	if rec.Code != http.StatusOK {
		body, _ := io.ReadAll(rec.Body)
		b.Fatalf("GET %s: %d %.300s", path, rec.Code, body)
	}
	return took, read.Load()
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
