package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
)

// On a cluster, join_staging's old hours are found on every shard and
// dropped on every server, the others kept.
func TestStagingDropsOldHoursOnCluster(t *testing.T) {
	c, conn, _ := testkit.OpenCluster(t)
	ctx := context.Background()
	now := time.Now()
	old, fresh := now.Add(-48*time.Hour), now.Add(-time.Hour)
	// Traces enough that both shards hold some of each hour.
	for i := range 16 {
		for _, at := range []time.Time{old, fresh} {
			err := conn.Exec(ctx, `INSERT INTO join_staging (trace_id, span_id, record_id, kind, received_ns)
SELECT toString(?), 's', 'r', 0, toUInt64(?)`, i, uint64(at.UnixNano()))
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.DropStagingBefore(ctx, conn, now.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, srv := range c.Servers() {
		one, err := ddl.OpenExisting(ctx, srv.DSN("convtrace"))
		if err != nil {
			t.Fatal(err)
		}
		if err := one.Exec(ctx, "SYSTEM SYNC REPLICA join_staging_local"); err != nil {
			t.Fatal(err)
		}
		var oldRows, freshRows uint64
		err = one.QueryRow(ctx, "SELECT countIf(received_ns = ?), countIf(received_ns = ?) FROM join_staging_local",
			uint64(old.UnixNano()), uint64(fresh.UnixNano())).Scan(&oldRows, &freshRows)
		if err != nil || oldRows != 0 || freshRows == 0 {
			t.Errorf("server %d: %d rows of the old hour, %d of the last, %v; want none and some", i, oldRows, freshRows, err)
		}
		one.Close()
	}
}
