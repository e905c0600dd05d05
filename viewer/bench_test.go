package viewer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// Environment of the viewer benchmarks (see BENCHMARKS.md, issue 5).
const (
	// benchDSNEnv names a database to generate the benchmark data into,
	// or to reuse when an earlier run left it there, instead of a fresh
	// database on the test server: it saves the generation between runs.
	benchDSNEnv = "CONVTRACE_BENCH_DSN"
	// benchTurnsEnv overrides how many turns the benchmarks generate
	// (default synth.DefaultTurns, a million).
	benchTurnsEnv = testkit.BenchTurnsEnv
)

// benchData holds the databases the viewer benchmarks of the process
// read, one per turn count: BenchmarkCostAPI10M asks for ten million and
// BenchmarkViewer for a million, and each must get the count its name
// promises whichever runs first. Each is generated on first use, never by
// a plain go test (benchmarks run only with -bench).
var benchData struct {
	mu    sync.Mutex
	conns map[int]*topology.Conn
}

// benchConn returns a connection to a database holding the synthetic
// conversations (CONVTRACE_BENCH_TURNS of them, default a million),
// generating them on first use. Its progress goes to stderr: a million
// turns take seconds, and ten million minutes.
func benchConn(b *testing.B) *topology.Conn {
	b.Helper()
	turns := testkit.BenchTurns(b, synth.DefaultTurns)
	benchData.mu.Lock()
	defer benchData.mu.Unlock()
	if conn, ok := benchData.conns[turns]; ok {
		return conn
	}
	dsn := os.Getenv(benchDSNEnv)
	switch {
	case dsn != "":
	case os.Getenv(testkit.BenchDataEnv) != "":
		// A kept server: the turns are generated once, then reused.
		dsn = testkit.SharedClickHouse(b).DSN(fmt.Sprintf("bench_%d", turns))
	default:
		// A fresh database per count; it skips b when no server binary
		// exists.
		dsn = testkit.DSN(b)
	}
	conn, err := openBenchData(dsn, turns)
	if err != nil {
		b.Fatal(err)
	}
	if benchData.conns == nil {
		benchData.conns = make(map[int]*topology.Conn)
	}
	benchData.conns[turns] = conn
	return conn
}

// openBenchData opens dsn and fills it with turns synthetic turns, or
// reuses them when an earlier run left exactly those there.
func openBenchData(dsn string, turns int) (*topology.Conn, error) {
	cfg := synth.Config{Turns: turns, Progress: os.Stderr}
	ctx := context.Background()
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := ddl.Migrate(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("migrate %s: %w", dsn, err)
	}
	var have, known uint64
	if err := conn.QueryRow(ctx, "SELECT count(), countIf(thread_id = ?) FROM conversations", synth.Thread1000).Scan(&have, &known); err != nil {
		conn.Close()
		return nil, fmt.Errorf("count turns in %s: %w", dsn, err)
	}
	switch {
	case have == uint64(cfg.Turns) && known == 1000:
		fmt.Fprintf(os.Stderr, "synth: reusing the %d turns in %s\n", have, dsn)
	case have == 0:
		sum, err := synth.Generate(ctx, conn, cfg)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("generate benchmark data in %s: %w", dsn, err)
		}
		fmt.Fprintf(os.Stderr, "synth: %d turns in %d threads generated in %s\n", sum.Turns, sum.Threads, sum.Elapsed.Round(1e6))
	default:
		conn.Close()
		return nil, fmt.Errorf("%s holds %d turns, not the %d synthetic ones the benchmarks want: name an empty or new database in %s", dsn, have, cfg.Turns, benchDSNEnv)
	}
	return conn, nil
}

// benchServer is the viewer over the benchmark data, logging nowhere.
func benchServer(b *testing.B) (http.Handler, *topology.Conn) {
	b.Helper()
	conn := benchConn(b)
	return viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler(), conn
}

// BenchmarkViewer measures the server time of the viewer's routes over a
// million synthetic turns (5,000 threads), each op one request through the
// handler, and beside them the baselines the routes are read against:
// plain clickhouse-go queries of the rows a page cannot avoid reading.
func BenchmarkViewer(b *testing.B) {
	h, conn := benchServer(b)
	search := func(q string) string { return "?q=" + url.QueryEscape(q) }
	routes := []struct{ name, path string }{
		{"ThreadsAPI", "/api/threads"},
		{"ThreadsPage", "/"},
		{"Thread200API", "/api/threads/" + synth.Thread200 + "/turns"},
		{"Thread200Page", "/threads/" + synth.Thread200},
		// The pages BenchmarkViewerBrowser loads: the server's share of
		// their load times.
		{"Thread10Page", "/threads/" + synth.Thread10},
		{"Thread1000Page", "/threads/" + synth.Thread1000},
		{"SearchCommonAPI", "/api/search" + search(synth.CommonWord)},
		{"SearchCommonPage", "/search" + search(synth.CommonWord)},
		{"SearchRareAPI", "/api/search" + search(synth.RarePhrase)},
		{"SearchRarePage", "/search" + search(synth.RarePhrase)},
		// The explorer's filters without a word (BenchmarkSearchWithoutWord
		// has them all, with stars).
		{"FilterToolAPI", "/api/search?role=tool_call&tool=bash"},
		{"FilterErrorAPI", "/api/search?status=error"},
		{"FilterPhaseAPI", "/api/search?phase=verify"},
		{"FilterStarredAPI", "/api/search?starred=1"},
	}
	var total uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&total); err != nil {
		b.Fatal(err)
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) { benchRoute(b, h, r.path, total) })
	}
	// The threads list with no summary yet: every thread's is built. Each
	// op starts from empty summaries; rows-read is of one more such
	// request.
	b.Run("ThreadsAPICold", func(b *testing.B) {
		drop := func() {
			for _, table := range []string{"thread_summary", "seen_parts"} {
				if err := conn.Exec(context.Background(), "TRUNCATE TABLE "+table); err != nil {
					b.Fatal(err)
				}
			}
		}
		for b.Loop() {
			b.StopTimer()
			drop()
			b.StartTimer()
			serveOK(b, h, "/api/threads")
		}
		b.StopTimer()
		record(b, b.Elapsed()/time.Duration(b.N))
		drop()
		reportRowsRead(b, rowsRead(h, "/api/threads"), total)
	})

	b.Run("BaselineThreadRows", func(b *testing.B) { benchThreadRows(b, conn, synth.Thread200, 200) })
	b.Run("BaselineGroupThreads", func(b *testing.B) {
		benchCount(b, conn, 5_000, "SELECT count() FROM (SELECT thread_id, count(), max(start_ns) FROM conversations GROUP BY thread_id)")
	})
	b.Run("BaselineContentScan", func(b *testing.B) {
		benchCount(b, conn, 0, "SELECT count() FROM conversations WHERE positionCaseInsensitiveUTF8(content, ?) > 0", synth.RarePhrase)
	})
	b.Run("BaselineCount", func(b *testing.B) {
		benchCount(b, conn, 0, "SELECT count() FROM conversations")
	})
	printRatios(b, total, []ratio{
		{"ThreadsAPI", "BaselineGroupThreads", "≤ 100 ms, < 1% of the table"},
		{"ThreadsPage", "BaselineGroupThreads", "—"},
		{"ThreadsAPICold", "BaselineContentScan", "≤ 1.5 passes over the table"},
		{"Thread200API", "BaselineThreadRows", "≤ 50 ms"},
		{"Thread200Page", "BaselineThreadRows", "≤ 50 ms, < 1% of the table"},
		{"Thread10Page", "BaselineThreadRows", "—"},
		{"Thread1000Page", "BaselineThreadRows", "—"},
		{"SearchCommonAPI", "BaselineContentScan", "≤ 1 s"},
		{"SearchCommonPage", "BaselineContentScan", "≤ 1 s"},
		{"SearchRareAPI", "BaselineContentScan", "≤ 0.3 s"},
		{"SearchRarePage", "BaselineContentScan", "≤ 0.3 s"},
		{"FilterToolAPI", "BaselineContentScan", "< 1×"},
		{"FilterErrorAPI", "BaselineContentScan", "< 1×"},
		{"FilterPhaseAPI", "BaselineContentScan", "< 1×"},
		{"FilterStarredAPI", "BaselineContentScan", "< 1×"},
	})
}

// figures are the times of this run's sub-benchmarks and the rows they
// read, by name, for the table of ratios a benchmark prints at its end.
var figures = map[string]figure{}

type figure struct {
	op      time.Duration
	rows    uint64
	counted bool // rows were counted: 0 is then a figure, not a gap
}

// record notes b's time per op under its name.
func record(b *testing.B, op time.Duration) {
	f := figures[path.Base(b.Name())]
	f.op = op
	figures[path.Base(b.Name())] = f
}

// ratio pairs a figure with the baseline it is read against.
type ratio struct{ figure, baseline, goal string }

// printRatios prints each figure beside its baseline, measured in the same
// run, and their ratio, with the rows each read, as a count and as a share
// of the table's total ("—" when not counted).
func printRatios(b *testing.B, total uint64, rs []ratio) {
	fmt.Printf("\n%-18s %10s %12s %8s  %-26s %10s %12s  %7s  %s\n", "figure", "ms/op", "rows", "read", "baseline", "ms/op", "rows", "ratio", "goal")
	read := func(f figure) (string, string) {
		if !f.counted {
			return "—", "—"
		}
		return fmt.Sprint(f.rows), fmt.Sprintf("%.2f%%", 100*float64(f.rows)/float64(max(total, 1)))
	}
	for _, r := range rs {
		f, okF := figures[r.figure]
		base, okB := figures[r.baseline]
		if !okF || !okB {
			fmt.Printf("%-18s not measured with its baseline %s in this run\n", r.figure, r.baseline)
			continue
		}
		rows, share := read(f)
		baseRows, _ := read(base)
		fmt.Printf("%-18s %10.1f %12s %8s  %-26s %10.1f %12s  %6.2f×  %s\n", r.figure, ms(f.op), rows, share, r.baseline, ms(base.op), baseRows,
			float64(f.op)/float64(base.op), r.goal)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// benchRoute serves GET path once per op and reports the response's size,
// and the rows one more request, warm, has ClickHouse read: rows-read, and
// table-% of the total rows of conversations. The count is the server's
// own, the progress it reports of every query (as system.query_log's
// read_rows), summed over the request's queries and inserts.
func benchRoute(b *testing.B, h http.Handler, path string, total uint64) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: status %d, want 200; body:\n%.2000s", path, rec.Code, rec.Body.String())
	}
	size := rec.Body.Len()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d, want 200", path, rec.Code)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(size), "resp-bytes")
	record(b, b.Elapsed()/time.Duration(b.N))
	reportRowsRead(b, rowsRead(h, path), total)
}

// rowsRead serves GET path once and returns the rows ClickHouse read for
// it: the progress the server reports of every query (as
// system.query_log's read_rows), summed over the request's queries and
// inserts.
func rowsRead(h http.Handler, path string) uint64 {
	var read atomic.Uint64
	req := newRequest(http.MethodGet, path, nil)
	h.ServeHTTP(httptest.NewRecorder(), req.WithContext(countRowsRead(req.Context(), &read)))
	return read.Load()
}

// countRowsRead returns ctx with its queries' progress, the rows ClickHouse
// read, added up in read.
func countRowsRead(ctx context.Context, read *atomic.Uint64) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { read.Add(p.Rows) }))
}

// reportRowsRead reports rows read, and as table-% of the total rows of
// conversations.
func reportRowsRead(b *testing.B, rows, total uint64) {
	f := figures[path.Base(b.Name())]
	f.rows, f.counted = rows, true
	figures[path.Base(b.Name())] = f
	b.ReportMetric(float64(rows), "rows-read")
	b.ReportMetric(100*float64(rows)/float64(max(total, 1)), "table-%")
}

// reportBaselineRows reports rows, read by one more run of a baseline's
// query, beside its time.
func reportBaselineRows(b *testing.B, rows uint64) {
	f := figures[path.Base(b.Name())]
	f.rows, f.counted = rows, true
	figures[path.Base(b.Name())] = f
	b.ReportMetric(float64(rows), "rows-read")
}

// benchThreadRows reads a thread's turns with the columns a thread page
// shows, in page order: the floor any thread page pays, whatever its SQL.
func benchThreadRows(b *testing.B, conn driver.Conn, thread string, want int) {
	const query = `
SELECT turn_id, span_id, phase, round, speaker, agent, role, seq, provider, model, tool_name,
       content, tokens_in, tokens_out, cost_usd, status, error, start_ns, duration_ns
FROM conversations
WHERE thread_id = ?
ORDER BY start_ns, seq`
	read := func(ctx context.Context) {
		rows, err := conn.Query(ctx, query, thread)
		if err != nil {
			b.Fatalf("query thread %s: %v", thread, err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var (
				turnID, spanID, phase, speaker, agent, role, provider, model, tool string
				content, status, errText                                           string
				round, seq                                                         uint16
				tokensIn, tokensOut                                                *uint32
				cost                                                               *float64
				start, duration                                                    uint64
			)
			if err := rows.Scan(&turnID, &spanID, &phase, &round, &speaker, &agent, &role, &seq, &provider, &model, &tool,
				&content, &tokensIn, &tokensOut, &cost, &status, &errText, &start, &duration); err != nil {
				b.Fatalf("scan turn of %s: %v", thread, err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			b.Fatalf("read thread %s: %v", thread, err)
		}
		if n != want {
			b.Fatalf("thread %s: %d turns, want %d", thread, n, want)
		}
	}
	for b.Loop() {
		read(context.Background())
	}
	record(b, b.Elapsed()/time.Duration(b.N))
	var rows atomic.Uint64
	read(countRowsRead(context.Background(), &rows))
	reportBaselineRows(b, rows.Load())
}

// benchCount runs a query answering one count, and checks the count when
// want is not 0.
func benchCount(b *testing.B, conn driver.Conn, want uint64, query string, args ...any) {
	count := func(ctx context.Context) {
		var n uint64
		if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			b.Fatalf("%s: %v", query, err)
		}
		if want != 0 && n != want {
			b.Fatalf("%s: %d, want %d", query, n, want)
		}
	}
	for b.Loop() {
		count(context.Background())
	}
	record(b, b.Elapsed()/time.Duration(b.N))
	var rows atomic.Uint64
	count(countRowsRead(context.Background(), &rows))
	reportBaselineRows(b, rows.Load())
}

// median is the median of vs, the mean of the middle two when their number
// is even, for the benchmarks that report it beside the mean: one slow op
// on a shared machine moves the mean, not the median. vs is left unsorted
// and must not be empty (b.Loop runs at least once).
func median[T ~int64 | ~float64](vs []T) T {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}
