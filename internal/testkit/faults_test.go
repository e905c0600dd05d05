package testkit_test

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
)

// TestClickHouseFaults freezes, kills and restarts a server: a frozen one
// does not answer, a restarted one answers on the same port with its data.
func TestClickHouseFaults(t *testing.T) {
	srv := testkit.OwnClickHouse(t)
	dsn := srv.DSN("fault")
	ctx := context.Background()
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "CREATE TABLE kept (n UInt8) ENGINE = MergeTree ORDER BY n"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "INSERT INTO kept SELECT 7"); err != nil {
		t.Fatal(err)
	}

	testkit.Signal(t, srv, syscall.SIGSTOP)
	pingCtx, cancel := context.WithTimeout(ctx, time.Second)
	if err := conn.Ping(pingCtx); err == nil {
		t.Errorf("a frozen server answered a ping")
	}
	cancel()
	testkit.Signal(t, srv, syscall.SIGCONT)

	testkit.Signal(t, srv, syscall.SIGKILL)
	testkit.Restart(t, srv)
	conn2, err := ddl.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("reconnect after restart: %v", err)
	}
	defer conn2.Close()
	var n uint8
	if err := conn2.QueryRow(ctx, "SELECT n FROM kept").Scan(&n); err != nil || n != 7 {
		t.Errorf("after restart: n = %d, err %v; want 7", n, err)
	}
}

// TestServeKill runs convtrace serve as a child process and kills it.
func TestServeKill(t *testing.T) {
	srv := testkit.OwnClickHouse(t)
	p := testkit.Serve(t, nil, "--clickhouse", srv.DSN("served"))
	resp, err := http.Get("http://" + p.OTLPHTTP + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz: %s", resp.Status)
	}
	p.Kill(t)
	if code := p.Wait(t, 5*time.Second); code != -1 {
		t.Errorf("killed process exit code %d, want -1 (signalled)", code)
	}
}
