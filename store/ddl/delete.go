package ddl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Mutator changes rows in place (ALTER TABLE … DELETE or UPDATE, a
// lightweight DELETE) and waits until the changes are done: on one
// server, in the table itself; on a cluster, in its local table on one
// replica of each shard (onShards), which replication carries to the
// others, waited for on every replica (one that is down is not waited
// for), so that no read meets an old row once Wait returns.
type Mutator struct {
	caps              Capabilities
	cluster, database string
	dsn               string // on a cluster, to reach each server
}

// NewMutator returns the Mutator of db's database.
func NewMutator(ctx context.Context, db DB) (Mutator, error) {
	caps, err := ServerCapabilities(ctx, db)
	if err != nil {
		return Mutator{}, err
	}
	cluster, database, err := ClusterOf(ctx, db)
	if err != nil {
		return Mutator{}, err
	}
	m := Mutator{caps: caps, cluster: cluster, database: database}
	if cluster != "" {
		if m.dsn, err = dsnOf(db); err != nil {
			return Mutator{}, err
		}
	}
	return m, nil
}

// Table is how a mutation names table, the one it changes as the ones
// its subqueries read: the table, or on a cluster its local table. The
// mutation runs on a replica of each shard, whose local tables hold the
// rows of the same threads when they are sharded by thread.
func (m Mutator) Table(table string) string {
	if m.cluster == "" {
		return table
	}
	return quoteIdent(table + LocalSuffix)
}

// Exec runs a mutation statement: on a cluster, on a replica of each
// shard.
func (m Mutator) Exec(ctx context.Context, db DB, stmt string, args ...any) error {
	if m.cluster == "" {
		return db.Exec(ctx, stmt, args...)
	}
	if m.caps.LightweightDelete {
		// A replicated table's mutation may read other tables (Table)
		// only when allowed; 18.16 has no such check, nor the setting.
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"allow_nondeterministic_mutations": 1}))
	}
	return onShards(ctx, db, m.dsn, m.cluster, func(conn driver.Conn) error {
		return conn.Exec(ctx, stmt, args...)
	})
}

// Delete deletes the rows of table that cond (SQL with ? arguments)
// selects: a lightweight DELETE on one server that has one, else an ALTER
// TABLE … DELETE mutation, which runs in the background until Wait.
func (m Mutator) Delete(ctx context.Context, db DB, table, cond string, args ...any) error {
	stmt := "ALTER TABLE " + m.Table(table) + " DELETE WHERE " + cond
	if m.cluster == "" {
		stmt = DeleteStatement(m.caps, table, cond)
	}
	if err := m.Exec(ctx, db, stmt, args...); err != nil {
		return fmt.Errorf("delete from %s: %w", table, err)
	}
	return nil
}

// DropPartition drops a partition of table, of every shard on a cluster.
func (m Mutator) DropPartition(ctx context.Context, db DB, table, partition string) error {
	if err := DropPartition(ctx, db, table, partition, m.cluster); err != nil {
		return fmt.Errorf("drop partition %s of %s: %w", partition, table, err)
	}
	return nil
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

// selectMutations counts a server's mutations of some tables still to do,
// and the parts they have left to rewrite. A replica whose table is
// read-only (its ZooKeeper session not back, as after a restart) does no
// mutation until it is writable again, then does it from the replication
// log: it is not waited for, as one that is down is not.
const selectMutations = `
SELECT count() AS pending, toUInt64(sum(parts_to_do)) AS parts
FROM system.mutations
WHERE database = ? AND has(?, table) AND is_done = 0
  AND (database, table) NOT IN (SELECT database, table FROM system.replicas WHERE is_readonly)`

// Wait polls the mutations of tables until none is left to do, calling
// progress (when not nil) with the mutations and parts still to do, each
// state once. On a cluster it polls every server, but for one that does
// not answer (down or frozen), which applies them once back.
func (m Mutator) Wait(ctx context.Context, db DB, tables []string, progress func(mutations, parts uint64)) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t
		if m.cluster != "" {
			names[i] = t + LocalSuffix
		}
	}
	count := func() (pending, parts uint64, err error) {
		return countMutations(ctx, db, m.database, names)
	}
	if m.cluster != "" {
		servers, err := openServers(ctx, db, m.dsn, m.cluster)
		if err != nil {
			return err
		}
		defer servers.close()
		count = func() (pending, parts uint64, err error) {
			return servers.countMutations(ctx, m.database, names)
		}
	}
	last := [2]uint64{1<<64 - 1, 0}
	for {
		pending, parts, err := count()
		if err != nil {
			return fmt.Errorf("mutations of %s: %w", strings.Join(tables, ", "), err)
		}
		if progress != nil && [2]uint64{pending, parts} != last {
			progress(pending, parts)
			last = [2]uint64{pending, parts}
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for mutations of %s: %w", strings.Join(tables, ", "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// countMutations runs selectMutations on one server.
func countMutations(ctx context.Context, db DB, database string, tables []string) (pending, parts uint64, err error) {
	rows, err := db.Query(ctx, selectMutations, database, tables)
	if err != nil {
		return 0, 0, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&pending, &parts); err != nil {
			return 0, 0, fmt.Errorf("scan: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("read: %w", err)
	}
	return pending, parts, nil
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
