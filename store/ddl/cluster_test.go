package ddl_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// On a cluster every statement runs ON CLUSTER, every table is a
// Replicated*MergeTree _local table with a Distributed table over it, and
// every column added goes to both: the local table is altered, the
// Distributed table, which holds no rows, made again over it.
func TestRenderOnCluster(t *testing.T) {
	for _, version := range []string{"18.16.1", "26.7.2.1"} {
		stmts := strings.Split(render(t, version, ddl.WithCluster("c"), ddl.WithDatabase("db")), ";\n")
		allowed := regexp.MustCompile("^(CREATE (TABLE|VIEW) IF NOT EXISTS `db`\\.\\w+ ON CLUSTER `c`|ALTER TABLE `db`\\.\\w+_local ON CLUSTER `c` ADD (COLUMN|INDEX) (IF NOT EXISTS )?\\S+ |DROP TABLE IF EXISTS `db`\\.\\w+ ON CLUSTER `c`$|" +
			"CREATE MATERIALIZED VIEW IF NOT EXISTS `db`\\.\\w+ ON CLUSTER `c` TO `db`\\.\\w+_local AS (?s:.*)FROM `db`\\.\\w+_local$|INSERT INTO \\w+ \\()")
		locals, distributed := map[string]bool{}, map[string]bool{}
		for _, s := range stmts {
			if !allowed.MatchString(s) {
				t.Errorf("server %s: statement not on the cluster or may rewrite data:\n%s", version, s)
			}
			if m := regexp.MustCompile("^CREATE TABLE IF NOT EXISTS `db`\\.(\\w+)_local .*ENGINE = (Replicated\\w*MergeTree)\\('/clickhouse/tables/\\{shard\\}/db/\\w+_local', '\\{replica\\}'").FindStringSubmatch(strings.ReplaceAll(s, "\n", " ")); m != nil {
				locals[m[1]] = true
			}
			if m := regexp.MustCompile("^CREATE TABLE IF NOT EXISTS `db`\\.(\\w+) ON CLUSTER `c` AS `db`\\.(\\w+)_local\\s+ENGINE = Distributed\\(`c`, `db`, \\w+_local, \\S+\\)$").FindStringSubmatch(s); m != nil && m[1] == m[2] {
				distributed[m[1]] = true
			}
		}
		for _, table := range []string{"conversations", "spans", "messages", "thread_meta", "turn_notes", "join_staging",
			"thread_summary", "cost_daily", "cost_thread_daily", "cost_days", "seen_parts", "import_claims",
			"trace_threads", "thread_traces", "latency_daily", "latency_crossing", "latency_errors", "latency_days"} {
			if !locals[table] || !distributed[table] {
				t.Errorf("server %s: table %s: replicated local %v, distributed %v; want both", version, table, locals[table], distributed[table])
			}
		}
		all := strings.Join(stmts, "\n")
		for _, s := range stmts {
			if m := regexp.MustCompile("^DROP TABLE IF EXISTS `db`\\.(\\w+) ").FindStringSubmatch(s); m != nil && !distributed[m[1]] {
				t.Errorf("server %s: drops %s, which is no Distributed table", version, m[1])
			}
		}
		for _, col := range []string{"cost_source", "revision", "heartbeat_ns", "internal", "history", "ttft_ns"} {
			if n := strings.Count(all, "ADD COLUMN "+ifNotExists(version)+col+" "); n != 1 {
				t.Errorf("server %s: column %s added %d times, want once (to the local table)", version, col, n)
			}
		}
		if !strings.Contains(all, "GLOBAL NOT IN") || !strings.Contains(all, "computed_ns) GLOBAL IN") {
			t.Errorf("server %s: cost_cells reads its day lists without GLOBAL IN:\n%s", version, all)
		}
	}
	if single := render(t, "18.16.1"); strings.Contains(single, "GLOBAL") || strings.Contains(single, "CLUSTER") {
		t.Errorf("one server's DDL names a cluster:\n%s", single)
	}
}

// ifNotExists is what ALTER ... ADD COLUMN says on the server version.
func ifNotExists(version string) string {
	if strings.HasPrefix(version, "18.") {
		return ""
	}
	return "IF NOT EXISTS "
}

// Migrations apply to a real cluster of 2 shards × 2 replicas from one of
// its servers, and a second run changes nothing; every server then has
// every table, and a row written through a Distributed table is read back
// through it from another server.
func TestMigrateOnCluster(t *testing.T) {
	c := testkit.OwnCluster(t)
	ctx := context.Background()
	dsn, err := topology.DSNWithCluster(c.DSN("convtrace"), c.Name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster()))
	if err != nil {
		t.Fatal(err)
	}
	ms := ddl.Migrations()
	if len(res.Applied) != len(ms) {
		t.Errorf("applied %d migrations, want %d", len(res.Applied), len(ms))
	}
	if res, err = ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster())); err != nil || len(res.Applied) != 0 {
		t.Errorf("second migrate: applied %v, %v; want none", res.Applied, err)
	}
	// Each table of one server's DDL, and schema_migrations, is a
	// replicated and a Distributed table on every server of the cluster.
	caps, _ := ddl.DetectCapabilities("18.16.1")
	tables := uint64(1)
	for _, m := range ddl.Migrations() {
		ss, err := m.Statements(caps)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range ss {
			if strings.HasPrefix(st, "CREATE TABLE") {
				tables++
			}
		}
	}
	for _, srv := range c.Servers() {
		dsn, _ := topology.DSNWithCluster(srv.DSN("convtrace"), c.Name)
		one, err := ddl.OpenExisting(ctx, dsn)
		if err != nil {
			t.Fatalf("server on port %d: %v", srv.TCPPort, err)
		}
		var replicated, distributed, views uint64
		err = one.QueryRow(ctx, `SELECT countIf(engine LIKE 'Replicated%'), countIf(engine = 'Distributed'), countIf(engine = 'View')
FROM system.tables WHERE database = currentDatabase()`).Scan(&replicated, &distributed, &views)
		if err != nil || replicated != tables || distributed != tables || views != 1 {
			t.Errorf("server on port %d: %d replicated, %d distributed tables, %d views, %v; want %d, %d, 1", srv.TCPPort, replicated, distributed, views, err, tables, tables)
		}
		one.Close()
	}
}

// A turn written through a Distributed table from one server is stored on
// one shard, by both its replicas, and read back through it from every
// server, the cost_cells view included.
func TestWriteReadOnCluster(t *testing.T) {
	c, conn, _ := testkit.OpenCluster(t)
	ctx := context.Background()
	in := uint32(7)
	turn := schema.Turn{TurnID: "s:response:1", SpanID: "s", ThreadID: "th", Role: schema.RoleResponse, Seq: 1,
		TokensIn: &in, CostSource: schema.CostPriced, StartNS: uint64(time.Now().UnixNano())}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO conversations ("+strings.Join(schema.TurnColumns, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(turn.Values()...); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	var holders []int
	for i, srv := range c.Servers() {
		one, err := ddl.OpenExisting(ctx, srv.DSN("convtrace"))
		if err != nil {
			t.Fatal(err)
		}
		if err := one.Exec(ctx, "SYSTEM SYNC REPLICA conversations_local"); err != nil {
			t.Fatal(err)
		}
		var all, local, tokens uint64
		err = one.QueryRow(ctx, "SELECT (SELECT count() FROM conversations), (SELECT count() FROM conversations_local), (SELECT sum(tokens_in) FROM cost_cells)").Scan(&all, &local, &tokens)
		if err != nil || all != 1 || tokens != 7 {
			t.Errorf("server %d: %d turns, %d tokens in cost_cells, %v; want 1, 7", i, all, tokens, err)
		}
		if local == 1 {
			holders = append(holders, i)
		}
		one.Close()
	}
	// Servers are listed shard by shard, two replicas each.
	if len(holders) != 2 || holders[0]/2 != holders[1]/2 {
		t.Errorf("servers holding the turn: %v, want both replicas of one shard", holders)
	}

	// The partition is listed from every shard, and dropped on all.
	var partition string
	if err := conn.QueryRow(ctx, "SELECT any(partition) FROM "+ddl.ActiveParts("conversations", c.Name, "convtrace")).Scan(&partition); err != nil || partition == "" {
		t.Fatalf("partition of the turn: %q, %v", partition, err)
	}
	if err := ddl.DropPartition(ctx, conn, "conversations", partition); err != nil {
		t.Fatal(err)
	}
	for i, srv := range c.Servers() {
		one, err := ddl.OpenExisting(ctx, srv.DSN("convtrace"))
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		if err := one.QueryRow(ctx, "SELECT count() FROM conversations_local").Scan(&n); err != nil || n != 0 {
			t.Errorf("server %d after the partition was dropped: %d turns, %v; want none", i, n, err)
		}
		one.Close()
	}
}

// A cluster whose profile lacks distributed_product_mode = 'global' is
// refused with the fix, by writers and readers alike, before anything is
// created.
func TestClusterProfileChecked(t *testing.T) {
	ctx := context.Background()
	dsn, err := topology.DSNWithCluster(testkit.DSN(t), "c") // one server: its profile denies
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(context.Context, string) (*topology.Conn, error){"Open": ddl.Open, "OpenExisting": ddl.OpenExisting} {
		conn, err := open(ctx, dsn)
		if err == nil {
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "distributed_product_mode") || !strings.Contains(err.Error(), "Scaling out") {
			t.Errorf("%s on a server whose profile denies distributed products: %v; want the fix named", name, err)
		}
	}
}
