package ddl_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// A mutation on a cluster whose first replica of each shard is frozen
// (it takes connections and answers nothing) or killed goes to the other
// replica of each shard, is waited for on the servers that answer, in
// seconds, and reaches the first ones once they are back. Through the
// distributed DDL queue it would wait three minutes for the frozen one.
func TestMutateWithFirstReplicasDown(t *testing.T) {
	c, first, _ := testkit.OpenCluster(t)
	ctx := context.Background()
	servers := c.Servers() // s1r1, s1r2, s2r1, s2r2
	batch, err := first.PrepareBatch(ctx, "INSERT INTO conversations ("+strings.Join(schema.TurnColumns, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	const threads = 8 // over both shards
	for i := range threads {
		turn := schema.Turn{TurnID: fmt.Sprintf("s%d:response:1", i), SpanID: fmt.Sprintf("s%d", i), ThreadID: fmt.Sprintf("th-%d", i),
			Role: schema.RoleResponse, Seq: 1, CostSource: schema.CostPriced, StartNS: uint64(time.Now().UnixNano())}
		if err := batch.Append(turn.Values()...); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	gone := []string{"th-0", "th-1", "th-2", "th-3", "th-4"}
	conns := make([]driver.Conn, len(servers))
	for i, srv := range servers {
		one, err := ddl.WithDSNCluster(srv.DSN("convtrace"), c.Name)
		if err != nil {
			t.Fatal(err)
		}
		if conns[i], err = ddl.OpenExisting(ctx, one); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
		if err := conns[i].Exec(ctx, "SYSTEM SYNC REPLICA conversations_local"); err != nil {
			t.Fatal(err)
		}
	}
	left := func(i int) (n uint64) {
		t.Helper()
		if err := conns[i].QueryRow(ctx, "SELECT count() FROM conversations_local WHERE has(?, thread_id)", gone).Scan(&n); err != nil {
			t.Fatalf("server %d: %v", i+1, err)
		}
		return n
	}
	if left(0) == 0 || left(2) == 0 {
		t.Fatalf("the threads to delete are on one shard: %d and %d turns", left(0), left(2))
	}

	testkit.Signal(t, servers[0], syscall.SIGSTOP)
	testkit.Signal(t, servers[2], syscall.SIGKILL)
	<-servers[2].Exited()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	live := conns[1]
	m, err := ddl.NewMutator(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, live, "conversations", "has(?, thread_id)", gone); err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(ctx, live, []string{"conversations"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 3} {
		if n := left(i); n != 0 {
			t.Errorf("server %d holds %d turns of the deleted threads", i+1, n)
		}
	}

	testkit.Signal(t, servers[0], syscall.SIGCONT)
	testkit.Restart(t, servers[2])
	if conns[2], err = ddl.OpenExisting(ctx, servers[2].DSN("convtrace")); err != nil {
		t.Fatal(err)
	}
	defer conns[2].Close()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n0, n2 := left(0), left(2)
		if n0 == 0 && n2 == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first replicas hold %d and %d turns of the deleted threads a minute after they are back", n0, n2)
		}
	}
	var kept uint64
	if err := live.QueryRow(ctx, "SELECT count() FROM conversations").Scan(&kept); err != nil || kept != threads-uint64(len(gone)) {
		t.Errorf("%d turns left, %v; want %d", kept, err, threads-len(gone))
	}
}
