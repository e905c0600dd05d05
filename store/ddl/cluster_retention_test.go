package ddl_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// A retention set on a cluster is the TTL of each shard's local tables,
// on every replica: turns older than it go at the next merge, newer ones
// stay, and the Distributed tables over them are unchanged. A server
// without TTL (ClickHouse 18.16) refuses it and changes nothing.
func TestRetentionOnCluster(t *testing.T) {
	c, conn, _ := testkit.OpenCluster(t)
	ctx := context.Background()
	const threads = 8
	testkit.InsertTurns(t, conn, append(threadTurns("old", threads, time.Now().AddDate(0, 0, -60)),
		threadTurns("new", threads, time.Now())...)...)
	conns := serverConns(t, c, "conversations_local")
	showCreate := func(one *topology.Conn, table string) string {
		t.Helper()
		var create string
		if err := one.QueryRow(ctx, "SHOW CREATE TABLE "+table).Scan(&create); err != nil {
			t.Fatalf("show create table %s: %v", table, err)
		}
		return create
	}
	distributed := map[int]string{}
	for i, one := range conns {
		distributed[i] = showCreate(one, "conversations") + showCreate(one, "spans")
	}

	caps, err := ddl.ServerCapabilities(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	err = ddl.SetRetention(ctx, conn, 30*24*time.Hour)
	switch {
	case !caps.TTL && !errors.Is(err, ddl.ErrNoTTL):
		t.Fatalf("retention on ClickHouse %s: %v, want ErrNoTTL", caps.Version, err)
	case caps.TTL && err != nil:
		t.Fatalf("retention on ClickHouse %s: %v", caps.Version, err)
	}
	ttl := regexp.MustCompile(`TTL ts \+ (toIntervalDay\(30\)|INTERVAL 30 DAY)`)
	for i, one := range conns {
		for _, table := range []string{"conversations_local", "spans_local"} {
			if got := ttl.MatchString(showCreate(one, table)); got != caps.TTL {
				t.Errorf("server %d, ClickHouse %s: %s has the retention's TTL: %v, want %v", i+1, caps.Version, table, got, caps.TTL)
			}
		}
		if now := showCreate(one, "conversations") + showCreate(one, "spans"); now != distributed[i] {
			t.Errorf("server %d: the Distributed tables changed:\n%s\nwas:\n%s", i+1, now, distributed[i])
		}
	}

	wantOld := uint64(threads)
	if caps.TTL {
		wantOld = 0
		for _, one := range conns {
			if err := one.Exec(ctx, "OPTIMIZE TABLE conversations_local FINAL"); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(one *topology.Conn, table, prefix string) (n uint64) {
		t.Helper()
		if err := one.QueryRow(ctx, "SELECT count() FROM "+table+" WHERE startsWith(thread_id, ?)", prefix).Scan(&n); err != nil {
			t.Fatalf("count %s turns of %s: %v", prefix, table, err)
		}
		return n
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var left uint64
		for _, one := range conns {
			left += count(one, "conversations_local", "old-")
		}
		if left == 2*wantOld { // each row on both replicas of its shard
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d copies of old turns on the replicas a minute after the merges, want %d", left, 2*wantOld)
		}
	}
	for i, one := range conns {
		if old, fresh := count(one, "conversations", "old-"), count(one, "conversations", "new-"); old != wantOld || fresh != threads {
			t.Errorf("server %d reads %d old and %d new turns through the Distributed table, want %d and %d", i+1, old, fresh, wantOld, threads)
		}
	}
}
