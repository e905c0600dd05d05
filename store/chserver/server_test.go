package chserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/ddl"
)

func TestStartEnsureStop(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	srv, err := chserver.Start(ctx, dir)
	testkit.SkipOrFail(t, err)
	defer srv.Stop(ctx)
	if !srv.Owned() {
		t.Error("a started server is not owned")
	}

	conn, err := ddl.Open(ctx, srv.DSN("convtrace"))
	if err != nil {
		t.Fatal(err)
	}
	var one uint8
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 on the managed server: %v, %v", one, err)
	}
	conn.Close()

	// A second process finds the running server instead of starting another.
	again, err := chserver.Ensure(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Owned() || again.TCPPort != srv.TCPPort {
		t.Errorf("Ensure on a folder with a running server: owned %v, port %d; want attached to port %d", again.Owned(), again.TCPPort, srv.TCPPort)
	}
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(filepath.Join(dir, "server.json"))
	if err != nil {
		t.Fatalf("server state: %v", err)
	}
	if len(b) == 0 {
		t.Fatal("empty server state")
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "server.json")); !os.IsNotExist(err) {
		t.Errorf("server.json still there after Stop: %v", err)
	}
	// The owner's Stop really stopped it: Ensure now has to start a new one,
	// on the same data.
	fresh, err := chserver.Ensure(ctx, dir)
	if err != nil {
		t.Fatalf("restart in the same folder: %v", err)
	}
	defer fresh.Stop(ctx)
	if !fresh.Owned() {
		t.Error("Ensure attached to a server that should have stopped")
	}
	conn, err = ddl.Open(ctx, fresh.DSN("convtrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var dbs uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = 'convtrace'").Scan(&dbs); err != nil || dbs != 1 {
		t.Errorf("database created before the restart: count %d, %v", dbs, err)
	}
}

func TestFindBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := chserver.FindBinary(); err != chserver.ErrNoBinary {
		t.Errorf("FindBinary with an empty PATH = %v, want ErrNoBinary", err)
	}
}
