package ddl

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
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

// DropPartition drops a partition of table, on every shard of cluster
// when it is not empty: there, of its local table on a replica of each
// shard (onShards), which replication carries to the others (a replica
// that is down drops it once back).
func DropPartition(ctx context.Context, db DB, table, partition, cluster string) error {
	if cluster == "" {
		return db.Exec(ctx, "ALTER TABLE "+quoteIdent(table)+" DROP PARTITION "+partition)
	}
	dsn, err := dsnOf(db)
	if err != nil {
		return err
	}
	stmt := "ALTER TABLE " + quoteIdent(table+LocalSuffix) + " DROP PARTITION " + partition
	return onShards(ctx, db, dsn, cluster, func(conn driver.Conn) error { return conn.Exec(ctx, stmt) })
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// ClusterOf returns the cluster the connection's database is spread over,
// as its conversations table says (a Distributed table names it), and the
// database's name; the cluster is empty on one server.
func ClusterOf(ctx context.Context, db DB) (cluster, database string, err error) {
	rows, err := db.Query(ctx, `SELECT currentDatabase(), engine, engine_full FROM system.tables
WHERE database = currentDatabase() AND name = 'conversations'`)
	if err != nil {
		return "", "", fmt.Errorf("query the engine of conversations: %w", err)
	}
	defer rows.Close()
	var engine, full string
	for rows.Next() {
		if err := rows.Scan(&database, &engine, &full); err != nil {
			return "", "", fmt.Errorf("scan the engine of conversations: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", fmt.Errorf("read the engine of conversations: %w", err)
	}
	if engine == "Distributed" {
		// Distributed(cluster, database, table, key), names maybe quoted.
		args, _ := strings.CutPrefix(full, "Distributed(")
		name, _, _ := strings.Cut(args, ",")
		cluster = strings.Trim(strings.TrimSpace(name), "`'\"")
	}
	return cluster, database, nil
}

// EveryReplica returns a table function reading the system table
// system.name of every server of cluster, each replica of each shard
// (ClickHouse 18.16 has no clusterAllReplicas): remote() over every
// address system.clusters lists.
func EveryReplica(ctx context.Context, db DB, cluster, name string) (string, error) {
	rows, err := db.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", cluster)
	if err != nil {
		return "", fmt.Errorf("query the servers of cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var addrs []string
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			return "", fmt.Errorf("scan the servers of cluster %s: %w", cluster, err)
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read the servers of cluster %s: %w", cluster, err)
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("cluster %s: no server in system.clusters", cluster)
	}
	return fmt.Sprintf("remote(%s, system, %s)", sqlString(strings.Join(addrs, ",")), name), nil
}
