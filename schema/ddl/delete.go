package ddl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Mutator changes rows in place (ALTER TABLE … DELETE or UPDATE, a
// lightweight DELETE) and waits until the changes are done: on one
// server, in the table itself; on a cluster, in its local table ON
// CLUSTER, waited for on every replica (one that is down is not waited
// for), so that no read meets an old row once Wait returns.
type Mutator struct {
	caps              Capabilities
	cluster, database string
	mutations         string // the system.mutations to wait on: this server's or every replica's
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
	m := Mutator{caps: caps, cluster: cluster, database: database, mutations: "system.mutations"}
	if cluster != "" {
		if m.mutations, err = EveryReplica(ctx, db, cluster, "mutations"); err != nil {
			return Mutator{}, err
		}
	}
	return m, nil
}

// Table is what an ALTER TABLE changing table's rows names: the table, or
// on a cluster its local table ON CLUSTER.
func (m Mutator) Table(table string) string {
	if m.cluster == "" {
		return table
	}
	return quoteIdent(table+LocalSuffix) + " ON CLUSTER " + quoteIdent(m.cluster)
}

// Local is how a mutation's subquery names table: the table, or on a
// cluster its local table, which holds on each shard the rows of the same
// threads as the table mutated when both are sharded by thread.
func (m Mutator) Local(table string) string {
	if m.cluster == "" {
		return table
	}
	return quoteIdent(table + LocalSuffix)
}

// Exec runs a mutation statement: on a cluster a distributed one, answered
// with a row per server, read to the end.
func (m Mutator) Exec(ctx context.Context, db DB, stmt string, args ...any) error {
	if m.cluster == "" {
		return db.Exec(ctx, stmt, args...)
	}
	if m.caps.LightweightDelete {
		// A replicated table's mutation may read other tables (Local)
		// only when allowed; 18.16 has no such check, nor the setting.
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"allow_nondeterministic_mutations": 1}))
	}
	rows, err := db.Query(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
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

// selectMutations counts the mutations of some tables still to do, and the
// parts they have left to rewrite. %s is the system.mutations to read.
// A replica whose table is read-only (its ZooKeeper session not back, as
// after a restart) does no mutation until it is writable again, then does
// it from the replication log: it is not waited for, as one that is down
// is not; the IN runs on each replica, against its own system.replicas.
const selectMutations = `
SELECT count() AS pending, toUInt64(sum(parts_to_do)) AS parts
FROM %s
WHERE database = ? AND has(?, table) AND is_done = 0
  AND (database, table) NOT IN (SELECT database, table FROM system.replicas WHERE is_readonly)`

// Wait polls the mutations of tables until none is left to do, calling
// progress (when not nil) with the mutations and parts still to do, each
// state once.
func (m Mutator) Wait(ctx context.Context, db DB, tables []string, progress func(mutations, parts uint64)) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t
		if m.cluster != "" {
			names[i] = t + LocalSuffix
		}
	}
	if m.cluster != "" {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"skip_unavailable_shards": 1}))
	}
	last := [2]uint64{1<<64 - 1, 0}
	for {
		var pending, parts uint64
		rows, err := db.Query(ctx, fmt.Sprintf(selectMutations, m.mutations), m.database, names)
		if err != nil {
			return fmt.Errorf("query mutations of %s: %w", strings.Join(tables, ", "), err)
		}
		for rows.Next() {
			if err := rows.Scan(&pending, &parts); err != nil {
				rows.Close()
				return fmt.Errorf("scan mutations: %w", err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read mutations: %w", err)
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
