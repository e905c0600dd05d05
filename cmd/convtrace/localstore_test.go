package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/localstore"
)

// localEnv points convtrace at a per-user data directory under a fresh
// XDG_DATA_HOME, as on a machine where nothing names --data.
func localEnv(t *testing.T) (env []string, data string) {
	xdg := t.TempDir()
	t.Setenv("CONVTRACE_DATA", "")
	t.Setenv("XDG_DATA_HOME", xdg)
	return []string{"CONVTRACE_DATA=", "XDG_DATA_HOME=" + xdg}, filepath.Join(xdg, "convtrace")
}

// convtraceIn runs the convtrace binary in dir with env and returns its
// exit code and output.
func convtraceIn(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("convtrace %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

func threadIDs(t *testing.T, viewer string) []string {
	t.Helper()
	res, err := http.Get("http://" + viewer + "/api/threads")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Threads []struct {
			ID string `json:"thread_id"`
		} `json:"threads"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, th := range list.Threads {
		ids = append(ids, th.ID)
	}
	return ids
}

// `serve --demo`, a Go pipeline whose tracer provider names no DSN, and
// `convtrace run` from another folder all record into the one local store
// the viewer shows; `status` says where it is, and the store keeps its
// ports across restarts. Before, each folder had its own ./.convtrace.
func TestLocalStoreSharedFromAnywhere(t *testing.T) {
	env, data := localEnv(t)
	srv := testkit.Serve(t, env, "--demo")
	demo := regexp.MustCompile(`(?m)^demo thread (\S+)$`).FindStringSubmatch(srv.Output())
	if demo == nil || !strings.Contains(srv.Output(), "open the demo run: http://"+srv.Viewer+"/threads/"+demo[1]) {
		t.Fatalf("serve --demo printed no demo thread and URL:\n%s", srv.Output())
	}

	// A Go pipeline, the README's example: NewTracerProvider("").
	tp, err := collector.NewTracerProvider("", collector.WithProject("shipcode"))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	if _, err := rec.Call(instrument.WithThread(context.Background(), "go-pipeline"), instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "plan"},
		func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "the plan"}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil || tp.Stats().Written == 0 {
		t.Fatalf("shutdown: %v, stats %+v", err, tp.Stats())
	}

	if code, out := convtraceIn(t, t.TempDir(), env, "run", "--thread", "from-elsewhere", "--", "echo", "x"); code != 0 {
		t.Fatalf("run from another folder: exit %d\n%s", code, out)
	}
	ids := strings.Join(threadIDs(t, srv.Viewer), ",")
	for _, want := range []string{demo[1], "go-pipeline", "from-elsewhere"} {
		if !strings.Contains(ids, want) {
			t.Errorf("the viewer lists %s, not %s", ids, want)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "clickhouse")); err != nil {
		t.Errorf("no server in the per-user data directory %s: %v", data, err)
	}

	// One serve per store: a second, on other ports, is refused at once
	// and names the first; status keeps showing the first.
	code, out := convtraceIn(t, t.TempDir(), env, "serve", "--demo", "--listen", "127.0.0.1:0", "--otlp-http", "", "--otlp-grpc", "")
	if code != 1 || !strings.Contains(out, "already serves the local store") || !strings.Contains(out, "http://"+srv.Viewer) {
		t.Errorf("a second serve on the store: exit %d, want 1 and the first serve named:\n%s", code, out)
	}
	code, status := convtraceIn(t, t.TempDir(), env, "status")
	dsn, _ := localstore.DSN(data)
	if code != 0 || !strings.Contains(status, dsn+"  running") || !strings.Contains(status, "http://"+srv.Viewer) ||
		!strings.Contains(status, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.OTLPHTTP) {
		t.Errorf("status: exit %d, want the DSN %s running, the viewer and OTLP endpoints:\n%s", code, dsn, status)
	}

	srv.Kill(t)
	if code, status := convtraceIn(t, t.TempDir(), env, "status"); code != 3 || !strings.Contains(status, "not running") {
		t.Errorf("status with no serve: exit %d, want 3 and not running:\n%s", code, status)
	}
	// make run again: the store's demo run is shown, not recorded twice.
	again := testkit.Serve(t, env, "--demo")
	ids = strings.Join(threadIDs(t, again.Viewer), ",")
	if got, _ := localstore.DSN(data); got != dsn || !strings.Contains(ids, "from-elsewhere") {
		t.Errorf("after a restart the store is at %s, want %s with its threads", got, dsn)
	}
	if n := strings.Count(ids, "demo-"); n != 1 || !strings.Contains(again.Output(), "open the demo run: http://"+again.Viewer+"/threads/"+demo[1]) {
		t.Errorf("serve --demo on a store with a demo run: %d demo threads (%s), want the one recorded before opened:\n%s", n, ids, again.Output())
	}
}

// Reading never creates: cost on a database that does not exist names
// convtrace migrate and leaves the server as it was; a DSN at the HTTP
// port fails at once with a hint.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	conn, _ := testkit.Open(t)
	srv := testkit.SharedClickHouse(t)
	code, _, stderr := runCapture(t, "cost", "--clickhouse", srv.DSN("other_dbx"))
	if code != 1 || !strings.Contains(stderr, `database "other_dbx" does not exist`) || !strings.Contains(stderr, "convtrace migrate") {
		t.Errorf("cost on a missing database: exit %d, stderr %q; want 1 naming convtrace migrate", code, stderr)
	}
	if got := queryText(t, conn, "SELECT count() FROM system.databases WHERE name = 'other_dbx'"); got[0] != "0" {
		t.Errorf("cost created the database other_dbx")
	}
	if err := conn.Exec(context.Background(), "CREATE DATABASE IF NOT EXISTS empty_db"); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCapture(t, "cost", "--clickhouse", srv.DSN("empty_db")); code != 1 || !strings.Contains(stderr, "no convtrace tables") {
		t.Errorf("cost on an empty database: exit %d, stderr %q", code, stderr)
	}
	if got := queryText(t, conn, "SELECT count() FROM system.tables WHERE database = 'empty_db'"); got[0] != "0" {
		t.Errorf("cost created tables in empty_db")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan string, 1)
	go func() {
		_, _, stderr := runCapture(t, "cost", "--clickhouse", fmt.Sprintf("clickhouse://127.0.0.1:%d/convtrace", srv.HTTPPort))
		done <- stderr
	}()
	select {
	case stderr := <-done:
		if !strings.Contains(stderr, "answers HTTP") || !strings.Contains(stderr, "native") {
			t.Errorf("cost at the HTTP port: stderr %q, want a hint about the native port", stderr)
		}
	case <-ctx.Done():
		t.Errorf("cost at the HTTP port still waiting after 20 s")
	}
}

// serve restarts the local ClickHouse it manages when it dies, says so,
// and reports not ready until it is back.
func TestServeRestartsItsClickHouse(t *testing.T) {
	env, data := localEnv(t)
	srv := testkit.Serve(t, env)
	b, err := os.ReadFile(filepath.Join(data, "clickhouse", "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.PID <= 0 {
		t.Fatalf("server.json %s: %v", b, err)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ready(t, srv, http.StatusOK, 60*time.Second)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(srv.Output(), "local ClickHouse restarted"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not restart its ClickHouse:\n%s", srv.Output())
		}
	}
	if !strings.Contains(srv.Output(), "local ClickHouse exited") {
		t.Errorf("serve did not log the exit:\n%s", srv.Output())
	}
	ready(t, srv, http.StatusOK, 30*time.Second)
	res, err := http.Get("http://" + srv.Viewer + "/api/threads")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("threads after the restart: %d %s", res.StatusCode, body)
	}
}

// The README's Go pipeline with the local store stopped: NewTracerProvider("")
// starts its ClickHouse, as convtrace run does, stores the calls and stops
// it at Shutdown. Before, the rows were lost with a warning and the
// program exited 0. A serve started meanwhile, which attached to that
// ClickHouse, starts it again once the pipeline stops it, and shows the
// pipeline's threads.
func TestGoPipelineStartsTheLocalStore(t *testing.T) {
	env, data := localEnv(t)
	if code, out := convtraceIn(t, t.TempDir(), env, "status"); code != 3 {
		t.Fatalf("a fresh store is running: exit %d\n%s", code, out)
	}
	pipeline := func(thread string, meanwhile func()) {
		t.Helper()
		tp, err := collector.NewTracerProvider("", collector.WithProject("shipcode"))
		if err != nil {
			t.Fatal(err)
		}
		meanwhile()
		rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
		if _, err := rec.Call(instrument.WithThread(context.Background(), thread), instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "plan"},
			func(context.Context) (instrument.Response, error) {
				return instrument.Response{Content: "the plan"}, nil
			}); err != nil {
			t.Fatal(err)
		}
		if err := tp.Shutdown(context.Background()); err != nil || tp.Stats().Written == 0 || tp.Stats().Lost != 0 {
			t.Fatalf("shutdown: %v, stats %+v; want the rows written", err, tp.Stats())
		}
	}
	pipeline("store-was-stopped", func() {})
	if srv := localstore.Running(context.Background(), data); srv != nil {
		t.Errorf("the pipeline left the ClickHouse it started running")
	}

	var srv *testkit.Process
	pipeline("serve-attached", func() { srv = testkit.Serve(t, env) })
	deadline := time.Now().Add(time.Minute)
	for {
		ids := strings.Join(threadIDs(t, srv.Viewer), ",")
		if strings.Contains(ids, "store-was-stopped") && strings.Contains(ids, "serve-attached") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the pipeline stopped its ClickHouse the viewer lists %q:\n%s", ids, srv.Output())
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(srv.Output(), "starting it here") {
		t.Errorf("serve did not say it took the local ClickHouse over:\n%s", srv.Output())
	}
}
