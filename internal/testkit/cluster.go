package testkit

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chcluster"
	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// ClusterEnv is the environment variable that turns missing ZooKeeper,
// java or ClickHouse from a skip of the cluster tests into a failure.
const ClusterEnv = "CONVTRACE_REQUIRE_CLUSTER"

// ClusterName is the name the test cluster's servers know it by.
const ClusterName = "convtrace"

// OwnCluster starts ZooKeeper and four ClickHouse servers as 2 shards × 2
// replicas of the cluster ClusterName, for this test alone; they stop
// when the test ends, failed or not, and their folder is removed unless
// the test failed.
func OwnCluster(t testing.TB) *chcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "convtrace-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c, err := chcluster.Start(ctx, dir, ClusterName, 2, 2)
	switch {
	case err == nil:
	case (errors.Is(err, chcluster.ErrNoZooKeeper) || errors.Is(err, chserver.ErrNoBinary)) && os.Getenv(ClusterEnv) != "1":
		_ = os.RemoveAll(dir)
		t.Skipf("skipping cluster test: %v (set %s=1 to fail instead)", err, ClusterEnv)
	default:
		t.Fatalf("start clickhouse cluster (logs in %s): %v", dir, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, srv := range c.Servers() {
				t.Logf("clickhouse on port %d, end of its logs:\n%s", srv.TCPPort, srv.LogTail())
			}
		}
		// Its data goes with it: a server not gone at once is killed.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.Stop(ctx)
		if t.Failed() {
			t.Logf("the cluster's logs are kept in %s", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	})
	return c
}

// OpenCluster starts a cluster of the test's own (OwnCluster) and returns
// it, a connection to the database convtrace on its first server,
// migrated on every server, and the DSN of that database, which names the
// cluster.
func OpenCluster(t testing.TB) (*chcluster.Cluster, *topology.Conn, string) {
	t.Helper()
	c := OwnCluster(t)
	ctx := context.Background()
	dsn, err := topology.DSNWithCluster(c.DSN("convtrace"), c.Name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster())); err != nil {
		t.Fatalf("migrate %s: %v", dsn, err)
	}
	return c, conn, dsn
}
