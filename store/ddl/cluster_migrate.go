package ddl

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// localAlter is a distributed ALTER of a local table, as onCluster renders
// it.
var localAlter = regexp.MustCompile("^ALTER TABLE (`[^`]+`)\\.(\\w+) ON CLUSTER `[^`]+` (ADD (COLUMN|INDEX) (?:IF NOT EXISTS )?(\\w+) .*)$")

// exec runs one statement of a migration. With servers to reach, the
// ALTER of a local table runs on one replica of each shard
// (topology.Cluster.OnShards) rather than ON CLUSTER, and Migrate waits
// until every server has the column.
func (cfg config) exec(ctx context.Context, db DB, stmt string) error {
	m := localAlter.FindStringSubmatch(strings.ReplaceAll(stmt, "\n", " "))
	if cfg.cluster == "" || cfg.servers.DSN == "" || m == nil {
		return execDDL(ctx, db, stmt, cfg.cluster)
	}
	table, change, what, name := m[2], m[3], m[4], m[5]
	if err := cfg.servers.OnShards(ctx, db, func(conn driver.Conn) error {
		return alterShard(ctx, conn, table, change, what, name)
	}); err != nil {
		return fmt.Errorf("alter %s: %w", table, err)
	}
	if what != "COLUMN" {
		return nil
	}
	shards, err := cfg.servers.Shards(ctx, db)
	if err != nil {
		return err
	}
	want := len(slices.Concat(shards...))
	every, err := cfg.servers.EveryReplica(ctx, db, "columns")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		var n uint64
		rows, err := db.Query(ctx, "SELECT count() FROM "+every+" WHERE database = ? AND table = ? AND name = ?", cfg.database, table, name)
		if err != nil {
			return fmt.Errorf("wait for column %s.%s on every server: %w", table, name, err)
		}
		for rows.Next() {
			err = rows.Scan(&n)
		}
		rows.Close()
		if err != nil {
			return fmt.Errorf("wait for column %s.%s on every server: %w", table, name, err)
		}
		if n >= uint64(want) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("column %s.%s on %d of %d servers: %w", table, name, n, want, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// alterShard runs ALTER TABLE table change on a replica of a shard,
// unless it has the column already (a migration interrupted after some
// shards, run again).
func alterShard(ctx context.Context, conn driver.Conn, table, change, what, name string) error {
	if what == "COLUMN" {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = ? AND name = ?", table, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return conn.Exec(ctx, "ALTER TABLE "+quoteIdent(table)+" "+change)
}

// recordContext is the context migrations are recorded with. On a
// cluster a migration is recorded on every replica of its shard before
// Migrate goes on (insert_quorum): a read of schema_migrations, which may
// go to any replica, then never misses it and applies it again.
func recordContext(ctx context.Context, db DB, cluster string) (context.Context, error) {
	if cluster == "" {
		return ctx, nil
	}
	rows, err := db.Query(ctx, `SELECT min(n) FROM (SELECT shard_num, count() AS n FROM system.clusters WHERE cluster = ? GROUP BY shard_num)`, cluster)
	if err != nil {
		return nil, fmt.Errorf("count the replicas of cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var replicas uint64
	for rows.Next() {
		if err := rows.Scan(&replicas); err != nil {
			return nil, fmt.Errorf("count the replicas of cluster %s: %w", cluster, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count the replicas of cluster %s: %w", cluster, err)
	}
	if replicas < 2 {
		return ctx, nil
	}
	return clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{
		"insert_distributed_sync": 1, "insert_deduplicate": 0, "insert_quorum": int(replicas),
	})), nil
}

func currentDatabase(ctx context.Context, db DB) (string, error) {
	rows, err := db.Query(ctx, "SELECT currentDatabase()")
	if err != nil {
		return "", fmt.Errorf("query current database: %w", err)
	}
	defer rows.Close()
	var name string
	if rows.Next() {
		if err := rows.Scan(&name); err != nil {
			return "", fmt.Errorf("scan current database: %w", err)
		}
	}
	return name, rows.Err()
}
