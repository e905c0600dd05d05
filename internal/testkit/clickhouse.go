package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// ClickHouseEnv is the environment variable that turns a missing server binary
// from a skip into a failure.
const ClickHouseEnv = "CONVTRACE_REQUIRE_CLICKHOUSE"

// BenchDataEnv names a folder the shared server keeps its data in, across
// runs, instead of a temporary one: make bench sets it, so that the ten
// million synthetic turns of the viewer's benchmarks are generated once.
const BenchDataEnv = "CONVTRACE_BENCH_DATA"

var shared struct {
	once   sync.Once
	server *chserver.Server
	dir    string
	err    error
}

// Main runs the package's tests, then stops the shared server. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.server != nil {
		_ = shared.server.Stop(context.Background())
		if os.Getenv(BenchDataEnv) == "" {
			_ = os.RemoveAll(shared.dir)
		}
	}
	os.Exit(code)
}

// SharedClickHouse returns the shared server, starting it on first use.
func SharedClickHouse(t testing.TB) *chserver.Server {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir = os.Getenv(BenchDataEnv); shared.dir != "" {
			shared.err = os.MkdirAll(shared.dir, 0o755)
		} else {
			shared.dir, shared.err = os.MkdirTemp("", "convtrace-ch-")
		}
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared.server, shared.err = chserver.Start(ctx, shared.dir)
	})
	SkipOrFail(t, shared.err)
	return shared.server
}

// SkipOrFail skips t when err says no server binary exists and the
// environment does not require one, and fails it on any other error.
func SkipOrFail(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, chserver.ErrNoBinary) && os.Getenv(ClickHouseEnv) != "1":
		t.Skipf("skipping integration test: %v (set %s=1 to fail instead)", err, ClickHouseEnv)
	default:
		t.Fatalf("start clickhouse: %v", err)
	}
}

// DSN returns the DSN of a fresh, unmigrated database on the shared server.
func DSN(t testing.TB) string {
	t.Helper()
	return SharedClickHouse(t).DSN(freshName())
}

// Open returns the DSN of a fresh database on the shared server and a
// connection to it, migrated to the current schema. The connection closes
// when the test ends.
func Open(t testing.TB) (*topology.Conn, string) {
	t.Helper()
	dsn := DSN(t)
	ctx := context.Background()
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := ddl.Migrate(ctx, conn); err != nil {
		t.Fatalf("migrate %s: %v", dsn, err)
	}
	return conn, dsn
}

func freshName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t_" + hex.EncodeToString(b)
}
