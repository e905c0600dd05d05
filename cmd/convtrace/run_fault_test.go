package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
)

var undeliveredRe = regexp.MustCompile(`convtrace run: (\d+) rows not delivered \(([^\n]*)\); spooled in ([^\n,]*),`)

// agentRun runs the real convtrace binary's `run` around the fake Claude
// agent (its transcript replayed, exiting 7) and returns the exit code and
// what it printed.
func agentRun(t *testing.T, thread string, flags ...string) (int, string) {
	t.Helper()
	script, _ := filepath.Abs("../../instrument/cliagent/testdata/agent.sh")
	transcript, _ := filepath.Abs("../../instrument/cliagent/testdata/claude.jsonl")
	args := append([]string{"run", "--thread", thread}, flags...)
	args = append(args, "--", script, "-p", "--output-format", "stream-json", "fix it")
	p := testkit.Start(t, []string{"FAKE_TRANSCRIPT=" + transcript, "FAKE_EXIT=7"}, args...)
	code := p.Wait(t, 45*time.Second)
	return code, p.Output()
}

// threadTurns counts a thread's turns under FINAL and its distinct turn ids.
func threadTurns(t *testing.T, conn driver.Conn, thread string) (final, unique uint64) {
	t.Helper()
	if err := conn.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id) FROM conversations FINAL WHERE thread_id = ?", thread).Scan(&final, &unique); err != nil {
		t.Fatal(err)
	}
	return final, unique
}

func unusedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// checkSpooled asserts the run passed its agent's exit code through and
// said, in one line, that it spooled its rows.
func checkSpooled(t *testing.T, code int, out string) {
	t.Helper()
	m := undeliveredRe.FindAllStringSubmatch(out, -1)
	t.Logf("exit %d; said %q", code, m)
	if code != 7 || len(m) != 1 || !strings.Contains(out, `"type":"result"`) {
		t.Fatalf("want the agent run (its output passed through), its exit code 7, one line saying rows were spooled; output:\n%s", out)
	}
}

// TestRunStorageDown is fault test (g): `convtrace run` with its ClickHouse
// killed runs the agent, passes its exit code through, says in one line
// that it spooled the turns, and the next run on the same --data, with
// ClickHouse back, delivers them once; `convtrace serve` delivers a spool
// too.
func TestRunStorageDown(t *testing.T) {
	srv := testkit.OwnClickHouse(t)
	dsn := srv.DSN("fault_g")
	data := t.TempDir()
	testkit.Signal(t, srv, syscall.SIGKILL)
	code, out := agentRun(t, "g-down", "--clickhouse", dsn, "--data", data)
	checkSpooled(t, code, out)

	testkit.Restart(t, srv)
	if code, out := agentRun(t, "g-up", "--clickhouse", dsn, "--data", data); code != 7 || undeliveredRe.MatchString(out) {
		t.Fatalf("run with ClickHouse back: exit %d, output:\n%s", code, out)
	}
	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sent, _ := threadTurns(t, conn, "g-up") // the same transcript, recorded with ClickHouse up
	final, unique := threadTurns(t, conn, "g-down")
	left, _ := os.ReadDir(filepath.Join(data, "spool"))
	t.Logf("run while down: %d turns expected, %d found under FINAL (%d unique); %d spool files left", sent, final, unique, len(left))
	if sent == 0 || final != sent || unique != final || len(left) != 0 {
		t.Errorf("want the spooled run's turns delivered once by the next run, the spool emptied")
	}

	// Spooled by a run whose ClickHouse never answered, delivered by serve.
	data2 := t.TempDir()
	code, out = agentRun(t, "g-serve", "--clickhouse", "clickhouse://"+unusedAddr(t)+"/x", "--data", data2)
	checkSpooled(t, code, out)
	testkit.Serve(t, nil, "--clickhouse", dsn, "--data", data2)
	deadline := time.Now().Add(20 * time.Second)
	for final, _ = threadTurns(t, conn, "g-serve"); final < sent && time.Now().Before(deadline); final, _ = threadTurns(t, conn, "g-serve") {
		time.Sleep(100 * time.Millisecond)
	}
	final, unique = threadTurns(t, conn, "g-serve")
	t.Logf("spooled run delivered by serve: %d of %d turns (%d unique)", final, sent, unique)
	if final != sent || unique != final {
		t.Errorf("want serve to deliver the spooled run once")
	}
}

// TestRunOTLP sends a run's turns to a real `convtrace serve` given as a
// base URL, then to a collector that is down: spooled and said, and
// delivered by a later run on that --data.
func TestRunOTLP(t *testing.T) {
	conn, dsn := testkit.Open(t)
	collector := testkit.Serve(t, nil, "--clickhouse", dsn, "--data", t.TempDir())
	code, out := agentRun(t, "o-up", "--otlp", "http://"+collector.OTLPHTTP, "--data", t.TempDir())
	final, unique := threadTurns(t, conn, "o-up")
	t.Logf("run --otlp http://%s: exit %d, %d turns stored (%d unique)", collector.OTLPHTTP, code, final, unique)
	if code != 7 || final == 0 || unique != final || undeliveredRe.MatchString(out) {
		t.Fatalf("want the turns stored through the collector; output:\n%s", out)
	}

	data := t.TempDir()
	code, out = agentRun(t, "o-down", "--otlp", "http://"+unusedAddr(t), "--data", data)
	checkSpooled(t, code, out)
	if code, out := agentRun(t, "o-deliver", "--clickhouse", dsn, "--data", data); code != 7 || undeliveredRe.MatchString(out) {
		t.Fatalf("delivering run: exit %d, output:\n%s", code, out)
	}
	down, downUnique := threadTurns(t, conn, "o-down")
	t.Logf("run with the collector down: %d turns delivered later (%d unique), want %d", down, downUnique, final)
	if down != final || downUnique != down {
		t.Errorf("want the spooled OTLP run delivered once")
	}
}
