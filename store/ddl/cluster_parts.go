package ddl

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/store/topology"
)

// ActiveParts is the FROM and WHERE clauses that list the active parts of
// table in system.parts: on a cluster (not empty), the parts of its local
// table on one replica of every shard, in database.
func ActiveParts(table, cluster, database string) string {
	if cluster == "" {
		return "system.parts\nWHERE database = currentDatabase() AND table = " + sqlString(table) + " AND active"
	}
	return fmt.Sprintf("cluster(%s, system, parts)\nWHERE database = %s AND table = %s AND active",
		sqlString(cluster), sqlString(database), sqlString(table+LocalSuffix))
}

// DropPartition drops a partition of table, on every shard of db's
// cluster: there, of its local table on a replica of each shard
// (topology.Cluster.OnShards), which replication carries to the others (a
// replica that is down drops it once back).
func DropPartition(ctx context.Context, db ClusterDB, table, partition string) error {
	return dropPartition(ctx, db, db.Cluster(), table, partition)
}

func dropPartition(ctx context.Context, db DB, c topology.Cluster, table, partition string) error {
	if c.Name == "" {
		return db.Exec(ctx, "ALTER TABLE "+quoteIdent(table)+" DROP PARTITION "+partition)
	}
	stmt := "ALTER TABLE " + quoteIdent(table+LocalSuffix) + " DROP PARTITION " + partition
	return c.OnShards(ctx, db, func(conn driver.Conn) error { return conn.Exec(ctx, stmt) })
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
