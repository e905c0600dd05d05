package chcluster_test

import (
	"context"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
)

// The cluster answers as one: system.clusters names 2 shards × 2
// replicas, and a table created ON CLUSTER from one server exists on all
// four.
func TestClusterStarts(t *testing.T) {
	c := testkit.OwnCluster(t)
	ctx := context.Background()
	conn, err := ddl.Open(ctx, c.DSN("default"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var shards, servers uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(shard_num), count() FROM system.clusters WHERE cluster = ?", c.Name).Scan(&shards, &servers); err != nil {
		t.Fatal(err)
	}
	if shards != 2 || servers != 4 {
		t.Errorf("system.clusters: %d shards, %d servers; want 2, 4", shards, servers)
	}
	// A distributed DDL query answers with a row per server.
	rows, err := conn.Query(ctx, "CREATE DATABASE IF NOT EXISTS x ON CLUSTER "+c.Name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 4 {
		t.Errorf("CREATE DATABASE ON CLUSTER: %d rows, %v; want one per server", n, err)
	}
	rows.Close()
	for _, srv := range c.Servers() {
		one, err := ddl.Open(ctx, srv.DSN("default"))
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		if err := one.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = 'x'").Scan(&n); err != nil || n != 1 {
			t.Errorf("server on port %d: %d databases x, %v; want 1", srv.TCPPort, n, err)
		}
		one.Close()
	}
}
