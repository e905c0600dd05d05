package viewer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/chtest"
	"github.com/convtrace/convtrace/internal/synth"
	"github.com/convtrace/convtrace/schema"
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
	benchTurnsEnv = "CONVTRACE_BENCH_TURNS"
)

// benchData is the database every viewer benchmark of the process reads:
// generated once, on first use, never by a plain go test (benchmarks run
// only with -bench).
var benchData struct {
	once sync.Once
	conn driver.Conn
	err  error
}

// benchConn returns a connection to a database holding the synthetic
// conversations, generating them on first use. Its progress goes to
// stderr: a million turns take seconds, and ten million minutes.
func benchConn(b *testing.B) driver.Conn {
	b.Helper()
	dsn := os.Getenv(benchDSNEnv)
	if dsn == "" {
		// Outside the Once: it skips b when no server binary exists.
		dsn = chtest.DSN(b)
	}
	benchData.once.Do(func() { benchData.conn, benchData.err = openBenchData(dsn) })
	if benchData.err != nil {
		b.Fatal(benchData.err)
	}
	return benchData.conn
}

func openBenchData(dsn string) (driver.Conn, error) {
	cfg := synth.Config{Progress: os.Stderr}
	if s := os.Getenv(benchTurnsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", benchTurnsEnv, s, err)
		}
		cfg.Turns = n
	} else {
		cfg.Turns = synth.DefaultTurns
	}
	ctx := context.Background()
	conn, err := schema.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := schema.Migrate(ctx, conn); err != nil {
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
func benchServer(b *testing.B) (http.Handler, driver.Conn) {
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
	routes := []struct {
		name, path string
		optional   bool // skipped while the route answers 404
	}{
		{"ThreadsAPI", "/api/threads", false},
		{"ThreadsPage", "/", false},
		{"Thread200API", "/api/threads/" + synth.Thread200 + "/turns", false},
		{"Thread200Page", "/threads/" + synth.Thread200, false},
		// The pages BenchmarkViewerBrowser loads: the server's share of
		// their load times.
		{"Thread10Page", "/threads/" + synth.Thread10, false},
		{"Thread1000Page", "/threads/" + synth.Thread1000, false},
		{"SearchCommonAPI", "/api/search" + search(synth.CommonWord), true},
		{"SearchCommonPage", "/search" + search(synth.CommonWord), true},
		{"SearchRareAPI", "/api/search" + search(synth.RarePhrase), true},
		{"SearchRarePage", "/search" + search(synth.RarePhrase), true},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) { benchRoute(b, h, r.path, r.optional) })
	}

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
}

// benchRoute serves GET path once per op and reports the response's size.
func benchRoute(b *testing.B, h http.Handler, path string, optional bool) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if optional && rec.Code == http.StatusNotFound {
		b.Skipf("GET %s: 404, the route does not exist yet; it is measured once the search feature is merged", path)
	}
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: status %d, want 200; body:\n%.2000s", path, rec.Code, rec.Body.String())
	}
	size := rec.Body.Len()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d, want 200", path, rec.Code)
		}
	}
	b.ReportMetric(float64(size), "resp-bytes")
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
	ctx := context.Background()
	for b.Loop() {
		rows, err := conn.Query(ctx, query, thread)
		if err != nil {
			b.Fatalf("query thread %s: %v", thread, err)
		}
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
		rows.Close()
		if n != want {
			b.Fatalf("thread %s: %d turns, want %d", thread, n, want)
		}
	}
}

// benchCount runs a query answering one count, and checks the count when
// want is not 0.
func benchCount(b *testing.B, conn driver.Conn, want uint64, query string, args ...any) {
	ctx := context.Background()
	for b.Loop() {
		var n uint64
		if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			b.Fatalf("%s: %v", query, err)
		}
		if want != 0 && n != want {
			b.Fatalf("%s: %d, want %d", query, n, want)
		}
	}
}
