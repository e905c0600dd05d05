package transfer_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/synth"
)

// run is one child process's wall time and peak resident memory.
type run struct {
	took  time.Duration
	rssMB float64
}

// child runs a command with stdin and stdout as given (file names, ""
// for none) and returns its time and peak RSS (rusage's ru_maxrss, which
// Linux counts in KiB).
func child(b *testing.B, stdin, stdout string, name string, args ...string) run {
	b.Helper()
	cmd := exec.Command(name, args...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if stdout != "" {
		f, err := os.Create(stdout)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	took := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return run{took: took, rssMB: float64(ru.Maxrss) / 1024}
}

// count returns one query's single number.
func count(b *testing.B, conn driver.Conn, q string) uint64 {
	b.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	return n
}

// BenchmarkExportImport exports a million synthetic turns as JSONL with
// convtrace export, imports them into an empty database with convtrace
// import, each a child process whose peak RSS is read from its rusage, and
// measures the same rows through clickhouse-client (SELECT ... FORMAT
// JSONEachRow, then INSERT ... FORMAT JSONEachRow) as the baseline. Run it
// alone, once:
//
//	CONVTRACE_REQUIRE_CLICKHOUSE=1 go test ./store/transfer -run '^$' -bench ExportImport -benchtime 1x
func BenchmarkExportImport(b *testing.B) {
	turns := testkit.BenchTurns(b, synth.DefaultTurns)
	ctx := context.Background()
	src, srcDSN := testkit.Open(b)
	threads := min(synth.DefaultThreads, max(4, turns/200))
	if _, err := synth.Generate(ctx, src, synth.Config{Turns: turns, Threads: threads, Progress: os.Stderr}); err != nil {
		b.Fatal(err)
	}
	bin := testkit.Binary(b)
	dir := b.TempDir()
	file := filepath.Join(dir, "export.jsonl")
	dstDSN := testkit.DSN(b)
	base, baseDSN := testkit.Open(b)
	u, err := url.Parse(srcDSN)
	if err != nil {
		b.Fatal(err)
	}
	client := []string{"--host", u.Hostname(), "--port", u.Port()}
	srcDB, baseDB := strings.Trim(u.Path, "/"), dbName(b, baseDSN)
	tables := []string{"conversations", "spans"}

	b.ResetTimer()
	for range b.N {
		exp := child(b, "", "", bin, "export", "--clickhouse", srcDSN, "--format", "jsonl", "--out", file)
		imp := child(b, "", "", bin, "import", "--clickhouse", dstDSN, file)
		var dump, load run
		for _, table := range tables {
			out := filepath.Join(dir, table+".base.jsonl")
			d := child(b, "", out, "clickhouse-client", append(client, "--query",
				fmt.Sprintf("SELECT * FROM %s.%s FORMAT JSONEachRow", srcDB, table))...)
			l := child(b, out, "", "clickhouse-client", append(client, "--query",
				fmt.Sprintf("INSERT INTO %s.%s FORMAT JSONEachRow", baseDB, table))...)
			dump.took, dump.rssMB = dump.took+d.took, max(dump.rssMB, d.rssMB)
			load.took, load.rssMB = load.took+l.took, max(load.rssMB, l.rssMB)
		}
		b.StopTimer()
		dst, err := ddl.OpenExisting(ctx, dstDSN)
		if err != nil {
			b.Fatal(err)
		}
		got := count(b, dst, "SELECT uniqExact(turn_id) FROM conversations")
		dst.Close()
		if want := count(b, src, "SELECT uniqExact(turn_id) FROM conversations"); got != want {
			b.Fatalf("imported %d turns, want %d", got, want)
		}
		if n := count(b, base, "SELECT count() FROM conversations"); n != uint64(turns) {
			b.Fatalf("baseline loaded %d turns, want %d", n, turns)
		}
		st, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		rate := func(r run) float64 { return float64(turns) / r.took.Seconds() }
		b.ReportMetric(rate(exp), "export-turns/s")
		b.ReportMetric(rate(imp), "import-turns/s")
		b.ReportMetric(exp.rssMB, "export-peak-RSS-MB")
		b.ReportMetric(imp.rssMB, "import-peak-RSS-MB")
		b.ReportMetric(rate(dump), "baseline-dump-turns/s")
		b.ReportMetric(rate(load), "baseline-load-turns/s")
		fmt.Fprintf(os.Stderr, "%d turns, %d threads; JSONL export %.0f MB\n", turns, threads, float64(st.Size())/1e6)
		fmt.Fprintf(os.Stderr, "| step | time | turns/s | peak RSS | vs clickhouse-client |\n|---|---|---|---|---|\n")
		fmt.Fprintf(os.Stderr, "| convtrace export --format jsonl | %.1f s | %.0f | %.0f MB | %.2f× the dump's time |\n",
			exp.took.Seconds(), rate(exp), exp.rssMB, exp.took.Seconds()/dump.took.Seconds())
		fmt.Fprintf(os.Stderr, "| convtrace import | %.1f s | %.0f | %.0f MB | %.2f× the load's time |\n",
			imp.took.Seconds(), rate(imp), imp.rssMB, imp.took.Seconds()/load.took.Seconds())
		fmt.Fprintf(os.Stderr, "| clickhouse-client dump (conversations, spans) | %.1f s | %.0f | %.0f MB | 1 |\n",
			dump.took.Seconds(), rate(dump), dump.rssMB)
		fmt.Fprintf(os.Stderr, "| clickhouse-client load (conversations, spans) | %.1f s | %.0f | %.0f MB | 1 |\n",
			load.took.Seconds(), rate(load), load.rssMB)
		b.StartTimer()
	}
}

func dbName(b *testing.B, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	return strings.Trim(u.Path, "/")
}
