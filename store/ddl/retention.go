package ddl

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoTTL means the server has no table TTL (before 19.6).
var ErrNoTTL = errors.New("this ClickHouse server has no table TTL (19.6 and later have)")

// retentionTables are the append-only tables whose rows a TTL removes:
// turns and spans, by the time they started (ts).
var retentionTables = []string{"conversations", "spans"}

// SetRetention sets the TTL of the turns and spans to d, at least a day,
// on a server that has TTL (ErrNoTTL otherwise): in place, as often as
// asked, through a Mutator (on a cluster, the local tables of each shard);
// rows older than the TTL go at the next merge.
func SetRetention(ctx context.Context, db ClusterDB, d time.Duration) error {
	m, err := NewMutator(ctx, db)
	if err != nil {
		return err
	}
	if !m.caps.TTL {
		return ErrNoTTL
	}
	days := int(d / (24 * time.Hour))
	if days < 1 {
		return fmt.Errorf("a retention of %s: want at least a day", d)
	}
	for _, table := range retentionTables {
		if err := m.Exec(ctx, db, RetentionStatement(m.Table(table), days)); err != nil {
			return fmt.Errorf("set the retention of %s: %w", table, err)
		}
	}
	return nil
}

// RetentionStatement is the statement that sets table's TTL to days.
func RetentionStatement(table string, days int) string {
	return fmt.Sprintf("ALTER TABLE %s MODIFY TTL ts + INTERVAL %d DAY", table, days)
}
