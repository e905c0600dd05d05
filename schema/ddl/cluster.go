package ddl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// On a cluster every table of the single-server DDL becomes two, created
// ON CLUSTER on every server: TABLE_local, the data, with the Replicated
// engine of the same family (one ZooKeeper path per shard, one replica per
// server), and TABLE, a Distributed table over them under the old name,
// which every reader and writer uses as before. A row's shard is chosen by
// its table's shard key: a thread's turns, spans' of a trace, a day's
// summaries each live on one shard, so copies of a row (same sort key)
// always meet on one shard and fold there as on one server.
// docs/architecture.md, "Cluster", says why each key.
var shardKeys = map[string]string{
	"conversations":     "cityHash64(thread_id)",
	"messages":          "cityHash64(thread_id)",
	"thread_meta":       "cityHash64(thread_id)",
	"turn_notes":        "cityHash64(thread_id)",
	"thread_summary":    "cityHash64(thread_id)",
	"cost_thread_daily": "cityHash64(thread_id)",
	"spans":             "cityHash64(trace_id)",
	"join_staging":      "cityHash64(trace_id)",
	"cost_daily":        "day",
	"cost_days":         "day",
	"seen_parts":        "cityHash64(summary)",
	"schema_migrations": "version",
}

// LocalSuffix names a Distributed table's local table on a cluster.
const LocalSuffix = "_local"

// WithCluster renders the DDL for the ClickHouse cluster name (as the
// servers' remote_servers name it): every statement ON CLUSTER, each table
// as a Replicated*MergeTree TABLE_local and a Distributed TABLE over it.
// Empty means one server, as without the option.
func WithCluster(name string) Option {
	return optionFunc(func(c *config) { c.cluster = name })
}

// ForDSN renders and applies the DDL for the cluster the DSN names, if
// any (DSNCluster), reaching its servers with the DSN's user: a writer's
// Migrate(ctx, conn, ForDSN(dsn)) with conn from Open(ctx, dsn).
func ForDSN(dsn string) Option {
	return optionFunc(func(c *config) { c.cluster, c.dsn = DSNCluster(dsn), dsn })
}

// WithDatabase names the database the cluster's DDL is for: its
// Distributed tables and ZooKeeper paths name it. Migrate sets it to the
// connection's.
func WithDatabase(name string) Option {
	return optionFunc(func(c *config) { c.database = name })
}

var (
	createTable = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+)\s*(\(.*\))\s*ENGINE = (\w*MergeTree)(?:\(([^)]*)\))?(.*)$`)
	createView  = regexp.MustCompile(`(?s)^CREATE VIEW IF NOT EXISTS (\w+)\s+(AS\s.*)$`)
	viewTables  = regexp.MustCompile(`\bFROM (\w+)\b`)
	alterTable  = regexp.MustCompile(`(?s)^ALTER TABLE (\w+) (ADD (COLUMN|INDEX) .*)$`)
)

// onCluster rewrites one statement of the single-server DDL for the
// cluster cfg names.
func onCluster(stmt string, cfg config) ([]string, error) {
	if cfg.database == "" {
		return nil, fmt.Errorf("cluster DDL for %q: no database named", cfg.cluster)
	}
	on := " ON CLUSTER " + quoteIdent(cfg.cluster)
	db := quoteIdent(cfg.database)
	if m := createTable.FindStringSubmatch(stmt); m != nil {
		table, columns, engine, args, rest := m[1], m[2], m[3], m[4], m[5]
		local := table + LocalSuffix
		replicated := fmt.Sprintf("'/clickhouse/tables/{shard}/%s/%s', '{replica}'", cfg.database, local)
		if args != "" {
			replicated += ", " + args
		}
		dist, err := distributed(table, cfg)
		if err != nil {
			return nil, err
		}
		return []string{
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s\n%s\nENGINE = Replicated%s(%s)%s", db, local, on, columns, engine, replicated, rest),
			dist,
		}, nil
	}
	if m := createView.FindStringSubmatch(stmt); m != nil {
		// Every server runs it in its default database: the tables it
		// reads are named with theirs.
		body := viewTables.ReplaceAllString(m[2], "FROM "+strings.ReplaceAll(db, "$", "$$")+".$1")
		return []string{fmt.Sprintf("CREATE VIEW IF NOT EXISTS %s.%s%s %s", db, m[1], on, body)}, nil
	}
	if m := alterTable.FindStringSubmatch(stmt); m != nil {
		table, change, what := m[1], m[2], m[3]
		stmts := []string{fmt.Sprintf("ALTER TABLE %s.%s%s%s %s", db, table, LocalSuffix, on, change)}
		if what == "COLUMN" {
			// ClickHouse 18.16 alters no Distributed table ON CLUSTER when
			// the shards replicate themselves: it is made again over the
			// altered local table instead. It holds no rows (inserts are
			// synchronous, clusterSettings) and readers resolve it by name.
			dist, err := distributed(table, cfg)
			if err != nil {
				return nil, err
			}
			stmts = append(stmts, fmt.Sprintf("DROP TABLE IF EXISTS %s.%s%s", db, table, on), dist)
		}
		return stmts, nil
	}
	return nil, fmt.Errorf("cluster DDL: no cluster form of %.60q", strings.TrimSpace(stmt))
}

// distributed is the Distributed table over table's local table.
func distributed(table string, cfg config) (string, error) {
	key, ok := shardKeys[table]
	if !ok {
		return "", fmt.Errorf("cluster DDL: table %s has no shard key", table)
	}
	db, cluster := quoteIdent(cfg.database), quoteIdent(cfg.cluster)
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s ON CLUSTER %s AS %s.%s%s\nENGINE = Distributed(%s, %s, %s%s, %s)",
		db, table, cluster, db, table, LocalSuffix, cluster, db, table, LocalSuffix, key), nil
}

// clusterSettings are the settings of every connection to a cluster:
//   - an INSERT into a Distributed table returns once its rows are stored
//     on their shards (by one replica each), not queued on the server
//     that took it: acknowledged means durable;
//   - identical blocks are stored twice, as on one server, where the
//     readers fold copies: a Replicated table would drop the second;
//   - a read goes to a replica more than a second behind its peers only
//     when no other answers (a replica back from an outage catches up
//     before it is read).
//
// A third, distributed_product_mode = 'global', must be in the user's
// profile on the servers: clickhouse-go sends ClickHouse 18.16 integer
// settings only. checkProfile says so when it is missing.
func clusterSettings() map[string]any {
	return map[string]any{
		"insert_distributed_sync":                   1,
		"insert_deduplicate":                        0,
		"max_replica_delay_for_distributed_queries": 1,
	}
}

// checkProfile fails when the user's profile lacks what convtrace's
// queries need on a cluster: without distributed_product_mode = 'global'
// the server refuses a subquery over a Distributed table inside a query
// over another (it runs the subquery once and sends its result to every
// shard, GLOBAL IN).
func checkProfile(ctx context.Context, db DB, cluster string) error {
	rows, err := db.Query(ctx, "SELECT value FROM system.settings WHERE name = 'distributed_product_mode'")
	if err != nil {
		return fmt.Errorf("query settings: %w", err)
	}
	defer rows.Close()
	var mode string
	if rows.Next() {
		if err := rows.Scan(&mode); err != nil {
			return fmt.Errorf("scan settings: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	if mode != "global" {
		return fmt.Errorf("cluster %s: the user's profile has distributed_product_mode = %q: convtrace needs 'global' (README, \"Scaling out\")", cluster, mode)
	}
	return nil
}

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
// when it is not empty. On a cluster it waits at most ten seconds for the
// servers (a replica that is down drops it once back), and answers with a
// row per server, read to the end.
func DropPartition(ctx context.Context, db DB, table, partition, cluster string) error {
	if cluster == "" {
		return db.Exec(ctx, "ALTER TABLE "+quoteIdent(table)+" DROP PARTITION "+partition)
	}
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"distributed_ddl_task_timeout": 10}))
	return execDDL(ctx, db, "ALTER TABLE "+quoteIdent(table+LocalSuffix)+" ON CLUSTER "+quoteIdent(cluster)+" DROP PARTITION "+partition, cluster)
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

// localAlter is a distributed ALTER of a local table, as onCluster renders
// it.
var localAlter = regexp.MustCompile("^ALTER TABLE (`[^`]+`)\\.(\\w+) ON CLUSTER `[^`]+` (ADD (COLUMN|INDEX) (?:IF NOT EXISTS )?(\\w+) .*)$")

// exec runs one statement of a migration. ClickHouse 18.16 may hang a
// distributed ALTER of a Replicated table for good (fixed in 20.12,
// ClickHouse#17089): with a DSN to reach the servers, the ALTER of a
// local table runs on one replica of each shard instead, which
// replication carries to the others, and Migrate waits until every
// server has the column.
func (cfg config) exec(ctx context.Context, db DB, stmt string) error {
	m := localAlter.FindStringSubmatch(strings.ReplaceAll(stmt, "\n", " "))
	if cfg.cluster == "" || cfg.dsn == "" || m == nil {
		return execDDL(ctx, db, stmt, cfg.cluster)
	}
	table, change, what, name := m[2], m[3], m[4], m[5]
	shards, err := shardAddrs(ctx, db, cfg.cluster)
	if err != nil {
		return err
	}
	for _, replicas := range shards {
		if err := cfg.alterShard(ctx, replicas, table, change, what, name); err != nil {
			return err
		}
	}
	if what != "COLUMN" {
		return nil
	}
	every, err := EveryReplica(ctx, db, cfg.cluster, "columns")
	if err != nil {
		return err
	}
	want := 0
	for _, replicas := range shards {
		want += len(replicas)
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

// alterShard runs ALTER TABLE table change on the first replica of a
// shard that answers, unless it has the column already (a migration
// interrupted after some shards, run again).
func (cfg config) alterShard(ctx context.Context, replicas []string, table, change, what, name string) error {
	var errs []error
	for _, addr := range replicas {
		opts, err := ParseDSN(cfg.dsn)
		if err != nil {
			return err
		}
		opts.Addr = []string{addr}
		conn, err := clickhouse.Open(opts)
		if err != nil {
			return fmt.Errorf("open clickhouse at %s: %w", addr, err)
		}
		err = func() error {
			defer conn.Close()
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
		}()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return fmt.Errorf("alter %s on no replica of a shard: %w", table, errors.Join(errs...))
}

// shardAddrs returns the addresses of every server of cluster, shard by
// shard.
func shardAddrs(ctx context.Context, db DB, cluster string) ([][]string, error) {
	rows, err := db.Query(ctx, "SELECT shard_num, host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", cluster)
	if err != nil {
		return nil, fmt.Errorf("query the servers of cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var shards [][]string
	last := uint32(0)
	for rows.Next() {
		var shard uint32
		var host string
		var port uint16
		if err := rows.Scan(&shard, &host, &port); err != nil {
			return nil, fmt.Errorf("scan the servers of cluster %s: %w", cluster, err)
		}
		if shard != last || len(shards) == 0 {
			shards = append(shards, nil)
			last = shard
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the servers of cluster %s: %w", cluster, err)
	}
	return shards, nil
}
