package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/chcluster"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/archive"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// The tables the collectors write, copied to one server to compare.
var clusterRawTables = []string{"conversations", "spans", "messages", "thread_meta", "turn_notes"}

// TestCluster is issue 14's cluster test: 2 shards × 2 replicas behind two
// collectors. The demo (over OTLP and in-process) and a synthetic load
// land on both shards, identical
// on both replicas of each; the viewer's answers and the cost report on
// the cluster are those of one server holding the same rows; with one
// replica of each shard frozen or killed, writes and reads go on, and the
// replicas catch up once resumed or restarted.
func TestCluster(t *testing.T) {
	began := time.Now()
	c := testkit.OwnCluster(t)
	servers := c.Servers() // shard by shard: s1r1, s1r2, s2r1, s2r2
	dsn := func(i int) string { return servers[i].DSN("convtrace") }
	if code, out, stderr := runCapture(t, "migrate", "--clickhouse", dsn(0), "--cluster", c.Name); code != 0 {
		t.Fatalf("migrate: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	t.Logf("cluster started and migrated in %s", time.Since(began).Round(time.Millisecond))

	env := []string{"CONVTRACE_CLUSTER=" + c.Name}
	a := testkit.Serve(t, env, "--clickhouse", dsn(0))
	b := testkit.Serve(t, env, "--clickhouse", dsn(2))
	conn := clusterConn(t, c, 0)

	thread := demoOverOTLP(t, a.OTLPHTTP)
	// And one recorded in-process, as convtrace demo and run do.
	if code, out, stderr := runCapture(t, "demo", "--clickhouse", dsn(3), "--cluster", c.Name); code != 0 {
		t.Fatalf("demo in-process: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	const calls = 80
	sendLoad(t, a.OTLPHTTP, b.OTLPHTTP, 0, calls)
	waitCalls(t, conn, calls)
	checkShards(t, c)
	t.Logf("demo and %d calls stored at %s", calls, time.Since(began).Round(time.Millisecond))

	one, singleDSN := copyToOne(t, servers[0].TCPPort)
	compareViewers(t, a.Viewer, one.Viewer, thread, 10) // the two demos' and the load's 8
	for _, args := range [][]string{{"cost"}, {"cost", "--by", "phase,speaker", "--format", "csv"}} {
		_, onCluster, _ := runCapture(t, append(args, "--clickhouse", dsn(2), "--cluster", c.Name)...)
		_, onOne, _ := runCapture(t, append(args, "--clickhouse", singleDSN)...)
		if onCluster != onOne || onOne == "" {
			t.Errorf("convtrace %s on the cluster:\n%s\non one server:\n%s", strings.Join(args, " "), onCluster, onOne)
		}
	}
	t.Logf("answers compared at %s", time.Since(began).Round(time.Millisecond))

	// Notes written through each viewer; a price change rewrites costs in
	// place (mutations of every shard's local table, waited for on every
	// replica); then the same answers again.
	putNotes(t, thread, a.Viewer, one.Viewer)
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(prices, []byte("prices:\n  - {pattern: 'gpt-4o-mini', provider: openai, input: 1, output: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range [][]string{{"--clickhouse", dsn(2), "--cluster", c.Name}, {"--clickhouse", singleDSN}} {
		if code, out, stderr := runCapture(t, append([]string{"reprice", "--prices", prices}, target...)...); code != 0 {
			t.Fatalf("reprice %v: exit %d, stdout %q, stderr %q", target, code, out, stderr)
		}
	}
	compareViewers(t, a.Viewer, one.Viewer, thread, 10)
	t.Logf("answers compared after a reprice at %s", time.Since(began).Round(time.Millisecond))

	// Nothing went wrong on the way, the background summarizer included.
	for _, p := range []*testkit.Process{a, b} {
		if out := p.Output(); strings.Contains(out, " WARN ") || strings.Contains(out, " ERROR ") {
			t.Errorf("a collector warned or failed:\n%s", out)
		}
	}

	// The lifecycle commands, each a mutation of every shard's local tables
	// waited for on every replica: the demo project's threads archived and
	// imported back, the OTLP demo's thread deleted, then every turn
	// pruned; after each, the same answers as one server given the same
	// commands.
	on := func(target []string, args ...string) string {
		t.Helper()
		// The flags before the files import takes.
		code, out, stderr := runCapture(t, append(append(args[:1:1], target...), args[1:]...)...)
		if code != 0 {
			t.Fatalf("convtrace %s %v: exit %d, stdout %q, stderr %q", strings.Join(args, " "), target, code, out, stderr)
		}
		return out
	}
	onCluster, onOne := []string{"--clickhouse", dsn(0), "--cluster", c.Name}, []string{"--clickhouse", singleDSN}
	dir := t.TempDir()
	on(onCluster, "archive", "--older-than", "1s", "--project", "demo", "--to", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "demo", "*"+archive.Ext))
	if len(files) != 2 {
		t.Fatalf("archive files %v, want the two demo threads'", files)
	}
	if body, _ := getBody(a.Viewer, "/api/threads/"+url.PathEscape(thread)); !strings.Contains(string(body), "not found") {
		t.Errorf("the archived thread is still stored: %.300s", body)
	}
	on(onCluster, append([]string{"import"}, files...)...)
	compareViewers(t, a.Viewer, one.Viewer, thread, 10)
	on(onCluster, "delete", "--thread", thread, "--yes")
	on(onOne, "delete", "--thread", thread, "--yes")
	compareViewers(t, a.Viewer, one.Viewer, thread, 9)
	on(onCluster, "prune", "--older-than", "1s", "--yes")
	on(onOne, "prune", "--older-than", "1s", "--yes")
	compareViewers(t, a.Viewer, one.Viewer, thread, 9)
	for i := range servers {
		conn := clusterConn(t, c, i)
		syncReplica(t, conn, "conversations"+ddl.LocalSuffix)
		var n uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations"+ddl.LocalSuffix).Scan(&n); err != nil || n != 0 {
			t.Errorf("server %d holds %d turns after the prune (%v), want none", i+1, n, err)
		}
	}
	t.Logf("archive, import, delete and prune compared at %s", time.Since(began).Round(time.Millisecond))

	// One replica of each shard down, one frozen (SIGSTOP: it takes
	// connections and answers nothing) and one killed: writes and reads go
	// on.
	testkit.Signal(t, servers[1], syscall.SIGSTOP)
	testkit.Signal(t, servers[3], syscall.SIGKILL)
	<-servers[3].Exited()
	sendLoad(t, a.OTLPHTTP, b.OTLPHTTP, calls, 2*calls)
	waitCalls(t, conn, calls) // the first load was pruned
	if _, err := getBody(a.Viewer, "/api/threads"); err != nil {
		t.Errorf("threads list with a replica of each shard down: %v", err)
	}
	// A thread deleted meanwhile: the mutation goes to the replica of each
	// shard that answers, not through the distributed DDL queue, which
	// would wait for the frozen one (and in ClickHouse 18.16 may stop a
	// replica's DDL worker for good); the others catch up once back.
	deleted := make(chan string, 1)
	go func() {
		code, out, stderr := runCapture(t, "delete", "--thread", "load-3", "--yes", "--clickhouse", dsn(0), "--cluster", c.Name)
		deleted <- fmt.Sprintf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}()
	select {
	case res := <-deleted:
		if !strings.HasPrefix(res, "exit 0") {
			t.Fatalf("delete with a replica of each shard down: %s", res)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("delete with a replica of each shard down: no answer in 90 s")
	}
	if n := turnsIn(t, conn, "conversations", "load-3"); n != 0 {
		t.Errorf("the deleted thread has %d turns on the cluster", n)
	}
	t.Logf("written, read and deleted with a replica of each shard down at %s", time.Since(began).Round(time.Millisecond))
	testkit.Signal(t, servers[1], syscall.SIGCONT)
	testkit.Restart(t, servers[3])
	t.Logf("replicas back at %s", time.Since(began).Round(time.Millisecond))
	checkShards(t, c)
	for i := range servers {
		if n := turnsIn(t, clusterConn(t, c, i), "conversations"+ddl.LocalSuffix, "load-3"); n != 0 {
			t.Errorf("server %d holds %d turns of the deleted thread once back", i+1, n)
		}
	}
	t.Logf("done in %s", time.Since(began).Round(time.Millisecond))
}

// copyToOne copies the rows of the cluster whose server listens on port
// to a fresh database of one server, and serves a viewer over it.
func copyToOne(t *testing.T, port int) (*testkit.Process, string) {
	t.Helper()
	single, dsn := testkit.Open(t)
	for _, table := range clusterRawTables {
		q := fmt.Sprintf("INSERT INTO %s SELECT * FROM remote('127.0.0.1:%d', convtrace, %s)", table, port, table)
		if err := single.Exec(context.Background(), q); err != nil {
			t.Fatalf("copy %s to one server: %v", table, err)
		}
	}
	return testkit.Serve(t, nil, "--clickhouse", dsn), dsn
}

// turnsIn counts the turns of thread in table.
func turnsIn(t *testing.T, conn driver.Conn, table, thread string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM "+table+" WHERE thread_id = ?", thread).Scan(&n); err != nil {
		t.Fatalf("count the turns of %s in %s: %v", thread, table, err)
	}
	return n
}

// clusterConn connects to server i of the cluster.
func clusterConn(t testing.TB, c *chcluster.Cluster, i int) driver.Conn {
	t.Helper()
	dsn, err := topology.DSNWithCluster(c.Servers()[i].DSN("convtrace"), c.Name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ddl.OpenExisting(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// demoOverOTLP records a demo run through the collector at addr and returns
// its thread.
func demoOverOTLP(t *testing.T, addr string) string {
	t.Helper()
	ctx := context.Background()
	provider, err := demo.StartProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Shutdown(ctx)
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+addr+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp, undelivered := spoolingProvider(exp, t.TempDir(), "demo", collector.WithoutRedaction())
	res, err := demo.Run(ctx, instrument.NewRecorder(instrument.WithTracerProvider(tp)), provider.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if u := undelivered(); u != "" {
		t.Fatalf("demo over OTLP: %s", u)
	}
	return res.ThreadID
}

// sendLoad sends calls from to to (exclusive) over eight threads, each
// call's log records to one collector and its span to the other.
func sendLoad(t *testing.T, a, b string, from, to int) {
	t.Helper()
	ab, ba := newOfficialForm(t, a, b), newOfficialForm(t, b, a)
	ab.threads, ba.threads = 8, 8
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := from + w; i < to; i += 4 {
				f := ab
				if i%2 == 1 {
					f = ba
				}
				f.start(i).End()
			}
		})
	}
	wg.Wait()
	if logs, spans := ab.logs.n.Load()+ba.logs.n.Load(), ab.spans.n.Load()+ba.spans.n.Load(); logs != int64(3*(to-from)) || spans != int64(to-from) {
		t.Fatalf("acknowledged %d log records and %d spans, want %d and %d", logs, spans, 3*(to-from), to-from)
	}
}

// waitCalls waits until the load's calls are stored whole, each a prompt
// and a response.
func waitCalls(t *testing.T, conn driver.Conn, calls int) {
	t.Helper()
	var n uint64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		err := conn.QueryRow(context.Background(), `SELECT uniqExact(turn_id) FROM conversations
WHERE thread_id LIKE 'load-%' AND ((role = 'prompt' AND content LIKE '%Question%') OR (role = 'response' AND content LIKE 'Answer%'))`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == uint64(2*calls) {
			return
		}
	}
	t.Fatalf("%d whole turns of the load stored, want %d", n, 2*calls)
}

// checkShards checks that every shard holds rows of every raw table that
// has any, and that both replicas of a shard hold the same rows.
func checkShards(t *testing.T, c *chcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	for s, shard := range c.Shards {
		sums := make([]map[string]string, len(shard))
		for r := range shard {
			conn := clusterConn(t, c, s*len(shard)+r)
			sums[r] = map[string]string{}
			for _, table := range clusterRawTables {
				local := table + ddl.LocalSuffix
				syncReplica(t, conn, local)
				var n, h uint64
				q := fmt.Sprintf("SELECT count(), sum(cityHash64(*)) FROM %s", local)
				if table == "conversations" || table == "spans" {
					q = fmt.Sprintf("SELECT count(), sum(cityHash64(trace_id, span_id, start_ns)) FROM %s", local)
				}
				if err := conn.QueryRow(ctx, q).Scan(&n, &h); err != nil {
					t.Fatalf("shard %d replica %d: %s: %v", s+1, r+1, q, err)
				}
				sums[r][table] = fmt.Sprintf("%d rows, hash %d", n, h)
				if r == 0 && n == 0 && (table == "conversations" || table == "spans") {
					t.Errorf("shard %d holds no %s", s+1, table)
				}
			}
		}
		for r := 1; r < len(shard); r++ {
			for _, table := range clusterRawTables {
				if sums[r][table] != sums[0][table] {
					t.Errorf("shard %d, %s: replica 1 has %s, replica %d %s", s+1, table, sums[0][table], r+1, sums[r][table])
				}
			}
		}
		t.Logf("shard %d: %v", s+1, sums[0])
	}
}

// syncReplica waits until the server has fetched every part of table its
// peers have. A replica frozen longer than its ZooKeeper session timeout
// takes a new session once resumed, when its restarting thread next looks
// (every 2 s by the cluster's config); until then a sync may fail at once
// or hang on the old session for minutes, so each try has its own limit.
func syncReplica(t *testing.T, conn driver.Conn, table string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = conn.Exec(ctx, "SYSTEM SYNC REPLICA "+table)
		cancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("sync %s: %v", table, err)
}

// compareViewers compares every JSON answer of the viewer at got with the
// one at want: the lists, each thread's page, turns, context, cost and
// markdown, a few turns' content and attributes, traces, search and the
// cost report.
func compareViewers(t *testing.T, got, want, demoThread string, threads int) {
	t.Helper()
	paths := []string{"/api/threads", "/api/threads?limit=5", "/api/cost", "/api/cost/csv?table=day_model", "/api/cost/csv?table=threads",
		"/api/cost?project=demo", "/api/cost?from=2026-01-01",
		"/api/search?q=Question", "/api/search?q=plan", "/api/search?status=running", "/api/search?status=interrupted",
		"/api/latency?from=2026-01-01", "/api/threads/" + demoThread}
	body, err := getBody(want, "/api/threads")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Threads []struct {
			ID string `json:"thread_id"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	traces := map[string]bool{}
	for _, th := range list.Threads {
		id := url.PathEscape(th.ID)
		paths = append(paths, "/api/threads/"+id, "/api/threads/"+id+"/turns", "/api/threads/"+id+"/context",
			"/api/threads/"+id+"/cost", "/api/threads/"+id+"/markdown")
		body, err := getBody(want, "/api/threads/"+id)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Turns []struct {
				TurnID  string `json:"turn_id"`
				TraceID string `json:"trace_id"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for i, turn := range page.Turns {
			traces[turn.TraceID] = true
			if i < 3 {
				turnPath := "/api/threads/" + id + "/turns/" + url.PathEscape(turn.TurnID)
				paths = append(paths, turnPath+"/content", turnPath+"/attributes", turnPath+"/markdown")
			}
		}
	}
	for trace := range traces {
		paths = append(paths, "/api/traces/"+trace)
	}
	slices.Sort(paths)
	if len(list.Threads) != threads {
		t.Errorf("one server lists %d threads, want %d", len(list.Threads), threads)
	}
	for _, p := range slices.Compact(paths) {
		w, werr := getBody(want, p)
		g, gerr := getBody(got, p)
		w, g = normalize(w), normalize(g)
		// A refusal (a thread deleted or pruned: 404) is an answer too.
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || string(g) != string(w) {
			t.Errorf("GET %s: on the cluster (%v):\n%.2000s\non one server (%v):\n%.2000s", p, gerr, g, werr, w)
		}
	}
	t.Logf("compared %d answers", len(paths))
}

var (
	// volatile is what differs between the two viewers' answers by the
	// clock: when the cost report was asked, when a note was written, when
	// a thread was pruned, whether the list was updated within the minute
	// before each was asked.
	volatile = regexp.MustCompile(`"to":"[^"]*"|"updated_ns":\d+|"pruned_at":"[^"]*"|"live":(true|false)`)
	decimal  = regexp.MustCompile(`-?\d+\.\d+(e-?\d+)?`)
)

// normalize drops what differs by the clock and writes every decimal
// number with 12 significant digits: a sum of floats depends on the order
// of its terms, which differs between shards summing side by side and one
// server (and between two part layouts of one server), in the last bits
// only.
func normalize(body []byte) []byte {
	body = volatile.ReplaceAll(body, nil)
	return decimal.ReplaceAllFunc(body, func(b []byte) []byte {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return b
		}
		return []byte(strconv.FormatFloat(f, 'g', 12, 64))
	})
}

// putNotes stars the first turns of thread, with a memo, through each
// viewer.
func putNotes(t *testing.T, thread string, viewers ...string) {
	t.Helper()
	body, err := getBody(viewers[0], "/api/threads/"+url.PathEscape(thread))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Turns []struct {
			TurnID string `json:"turn_id"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Turns) < 3 {
		t.Fatalf("thread %s: %d turns, %v", thread, len(page.Turns), err)
	}
	for _, v := range viewers {
		for _, turn := range page.Turns[:3] {
			req, err := http.NewRequest(http.MethodPut, "http://"+v+"/api/threads/"+url.PathEscape(thread)+"/turns/"+url.PathEscape(turn.TurnID)+"/note",
				strings.NewReader(`{"starred": true, "memo": "noted on `+turn.TurnID+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("PUT a note on %s: %s", v, res.Status)
			}
		}
	}
}

func getBody(addr, path string) ([]byte, error) {
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %.500s", res.Status, body)
	}
	return body, err
}
