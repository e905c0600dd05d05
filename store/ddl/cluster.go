package ddl

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/convtrace/convtrace/store/topology"
)

// shardKeys chooses each table's shard on a cluster, so that copies of a row
// (same sort key) meet on one shard and fold there as on one server.
// docs/design/cluster.md says how a table becomes two; docs/architecture.md,
// "Cluster", why each key.
var shardKeys = map[string]string{
	"conversations":     "cityHash64(thread_id)",
	"messages":          "cityHash64(thread_id)",
	"thread_meta":       "cityHash64(thread_id)",
	"turn_notes":        "cityHash64(thread_id)",
	"thread_summary":    "cityHash64(thread_id)",
	"thread_shells":     "cityHash64(thread_id)",
	"cost_thread_daily": "cityHash64(thread_id)",
	"trace_threads":     "cityHash64(thread_id)",
	"latency_crossing":  "cityHash64(thread_id)",
	"latency_errors":    "cityHash64(thread_id)",
	"spans":             "cityHash64(trace_id)",
	"join_staging":      "cityHash64(trace_id)",
	"thread_traces":     "cityHash64(trace_id)",
	"cost_daily":        "day",
	"cost_days":         "day",
	"latency_daily":     "day",
	"latency_days":      "day",
	"seen_parts":        "cityHash64(summary)",
	"import_claims":     "cityHash64(holder)",
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

// ForCluster renders and applies the DDL for the cluster c, if it names
// one, reaching its servers with c's DSN: a writer's
// Migrate(ctx, conn, ForCluster(conn.Cluster())) with conn from Open.
func ForCluster(c topology.Cluster) Option {
	return optionFunc(func(cfg *config) { cfg.cluster, cfg.servers = c.Name, c })
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
	createMV    = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+)\s+AS\s(.*)\bFROM (\w+)$`)
	insertInto  = regexp.MustCompile(`^INSERT INTO \w+ `)
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
	if m := createMV.FindStringSubmatch(stmt); m != nil {
		// Each server fills its local table from the rows its shard
		// stores: the view's table shares its source's shard key.
		return []string{fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s.%s%s TO %s.%s%s AS %sFROM %s.%s%s",
			db, m[1], on, db, m[2], LocalSuffix, m[3], db, m[4], LocalSuffix)}, nil
	}
	if insertInto.MatchString(stmt) {
		// It fills a new table through the Distributed tables, once, from
		// the server that migrates.
		return []string{stmt}, nil
	}
	if m := alterTable.FindStringSubmatch(stmt); m != nil {
		table, change, what := m[1], m[2], m[3]
		stmts := []string{fmt.Sprintf("ALTER TABLE %s.%s%s%s %s", db, table, LocalSuffix, on, change)}
		if what == "COLUMN" {
			// ClickHouse 18.16 alters no Distributed table ON CLUSTER when
			// the shards replicate themselves: it is made again over the
			// altered local table instead. It holds no rows (inserts are
			// synchronous, topology.ClusterSettings) and readers resolve it by name.
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
