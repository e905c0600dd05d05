package ddl

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/store/topology"
)

// ClusterDB is a DB that says which cluster its database is on, as a
// *topology.Conn does: a change in place reaches each shard through it.
type ClusterDB interface {
	DB
	Cluster() topology.Cluster
}

// Mutator changes rows in place (ALTER … DELETE or UPDATE, a lightweight
// DELETE, a TTL): on a cluster in the local tables, on one replica of each
// shard. Once Wait returns no read meets an old row (docs/design/cluster.md).
type Mutator struct {
	caps    Capabilities
	cluster topology.Cluster
}

// NewMutator returns the Mutator of db's database. The cluster db's DSN
// names must be the one its tables are on (topology.ClusterOf).
func NewMutator(ctx context.Context, db ClusterDB) (Mutator, error) {
	caps, err := ServerCapabilities(ctx, db)
	if err != nil {
		return Mutator{}, err
	}
	tables, _, err := topology.ClusterOf(ctx, db)
	if err != nil {
		return Mutator{}, err
	}
	c := db.Cluster()
	if tables != c.Name {
		return Mutator{}, fmt.Errorf("the tables of database %s are on cluster %q, its DSN names cluster %q: "+
			"a change in place needs the DSN to name theirs (?%s=NAME)", c.Database, tables, c.Name, topology.ClusterParam)
	}
	return Mutator{caps: caps, cluster: c}, nil
}

// Table is how a mutation names table, the one it changes as the ones
// its subqueries read: the table, or on a cluster its local table. The
// mutation runs on a replica of each shard, whose local tables hold the
// rows of the same threads when they are sharded by thread.
func (m Mutator) Table(table string) string { return MutatedTable(m.cluster.Name, table) }

// MutatedTable is how a mutation on cluster ("" on one server) names
// table (Mutator.Table).
func MutatedTable(cluster, table string) string {
	if cluster == "" {
		return table
	}
	return quoteIdent(table + LocalSuffix)
}

// Exec runs a mutation statement: on a cluster, on a replica of each
// shard.
func (m Mutator) Exec(ctx context.Context, db DB, stmt string, args ...any) error {
	if m.cluster.Name == "" {
		return db.Exec(ctx, stmt, args...)
	}
	if m.caps.LightweightDelete {
		// A replicated table's mutation may read other tables (Table)
		// only when allowed; 18.16 has no such check, nor the setting.
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"allow_nondeterministic_mutations": 1}))
	}
	return m.cluster.OnShards(ctx, db, func(conn driver.Conn) error {
		return conn.Exec(ctx, stmt, args...)
	})
}

// Delete deletes the rows of table that cond (SQL with ? arguments)
// selects: a lightweight DELETE on one server that has one, else an ALTER
// TABLE … DELETE mutation, which runs in the background until Wait.
func (m Mutator) Delete(ctx context.Context, db DB, table, cond string, args ...any) error {
	if err := m.Exec(ctx, db, DeleteOn(m.caps, m.cluster.Name, table, cond), args...); err != nil {
		return fmt.Errorf("delete from %s: %w", table, err)
	}
	return nil
}

// DropPartition drops a partition of table, of every shard on a cluster.
func (m Mutator) DropPartition(ctx context.Context, db DB, table, partition string) error {
	if err := dropPartition(ctx, db, m.cluster, table, partition); err != nil {
		return fmt.Errorf("drop partition %s of %s: %w", partition, table, err)
	}
	return nil
}

// DeleteOn is the statement Mutator.Delete runs on cluster ("" on one
// server): on a cluster an ALTER TABLE … DELETE of table's local table
// (MutatedTable), else DeleteStatement.
func DeleteOn(caps Capabilities, cluster, table, cond string) string {
	if cluster != "" {
		return "ALTER TABLE " + MutatedTable(cluster, table) + " DELETE WHERE " + cond
	}
	return DeleteStatement(caps, table, cond)
}

// DeleteStatement is the statement that deletes the rows of table that
// cond selects on one server with caps: a lightweight DELETE where it has
// one, else an ALTER TABLE … DELETE mutation.
func DeleteStatement(caps Capabilities, table, cond string) string {
	if caps.LightweightDelete {
		return "DELETE FROM " + table + " WHERE " + cond
	}
	return "ALTER TABLE " + table + " DELETE WHERE " + cond
}

// Tuple binds strings as a tuple, ('a', 'b'), which IN takes; a slice
// binds as an array, which it does not.
func Tuple(values []string) clickhouse.GroupSet {
	set := clickhouse.GroupSet{Value: make([]any, len(values))}
	for i, v := range values {
		set.Value[i] = v
	}
	return set
}
