package ddl_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chcluster"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
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
	const threads = 8
	testkit.InsertTurns(t, first, threadTurns("th", threads, time.Now())...)
	conns := serverConns(t, c, "conversations_local")
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
	t.Cleanup(func() { conns[2].Close() })
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

// gone are the threads of threadTurns the tests delete: some on each
// shard.
var gone = []string{"th-0", "th-1", "th-2", "th-3", "th-4"}

// threadTurns are n turns, one a thread (prefix-0, prefix-1, …), started
// at.
func threadTurns(prefix string, n int, at time.Time) []schema.Turn {
	turns := make([]schema.Turn, n)
	for i := range turns {
		span := fmt.Sprintf("%s-s%d", prefix, i)
		turns[i] = schema.Turn{TurnID: span + ":response:1", SpanID: span, ThreadID: fmt.Sprintf("%s-%d", prefix, i),
			Role: schema.RoleResponse, Seq: 1, CostSource: schema.CostPriced, StartNS: uint64(at.UnixNano())}
	}
	return turns
}

// serverConns connects to each server of the cluster, shard by shard,
// once each has every part of table its peers have.
func serverConns(t *testing.T, c *chcluster.Cluster, table string) []*topology.Conn {
	t.Helper()
	ctx := context.Background()
	var conns []*topology.Conn
	for _, srv := range c.Servers() {
		dsn, err := topology.DSNWithCluster(srv.DSN("convtrace"), c.Name)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ddl.OpenExisting(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := conn.Exec(ctx, "SYSTEM SYNC REPLICA "+table); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	return conns
}

// A wait whose deadline passes names each replica, table and mutation not
// done: one whose mutation stays to do (as on a replica killed and
// restarted), and one frozen while waited for, which is not passed over.
// Once the replica is back, a later wait finds the deletion done.
func TestWaitDeadlineNamesReplica(t *testing.T) {
	c, conn, _ := testkit.OpenCluster(t)
	ctx := context.Background()
	testkit.InsertTurns(t, conn, threadTurns("th", 8, time.Now())...)
	conns := serverConns(t, c, "conversations_local")
	// The second replica of the first shard, which the mutation does not
	// run on, does no mutation until told.
	stuck, srv := conns[1], c.Servers()[1]
	addr := fmt.Sprintf("127.0.0.1:%d", srv.TCPPort)
	if err := stuck.Exec(ctx, "SYSTEM STOP MERGES conversations_local"); err != nil {
		t.Fatal(err)
	}
	m, err := ddl.NewMutator(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, conn, "conversations", "has(?, thread_id)", gone); err != nil {
		t.Fatal(err)
	}
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(100 * time.Millisecond) {
		if err := stuck.QueryRow(ctx, "SELECT any(mutation_id) FROM system.mutations WHERE table = 'conversations_local' AND is_done = 0").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mutation to do on %s 30 s after the delete", addr)
		}
	}
	wait := func(limit time.Duration, progress func(mutations, parts uint64)) error {
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		return m.Wait(ctx, conn, []string{"conversations"}, progress)
	}
	names := func(err error, what ...string) {
		t.Helper()
		for _, w := range append([]string{addr, "conversations_local", "mutation " + id}, what...) {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Fatalf("wait: %v; want an error naming %q", err, w)
			}
		}
	}

	began := time.Now()
	err = wait(3*time.Second, nil)
	t.Logf("a replica that answers: %v", err)
	names(err, "deadline exceeded")
	if strings.Contains(err.Error(), "not answering") || time.Since(began) > 10*time.Second {
		t.Errorf("wait for a replica that answers, after %s: %v; want its deadline, 3 s", time.Since(began), err)
	}

	// Frozen for less than its ZooKeeper session (10 s), which would
	// otherwise take a minute to renew once it is back.
	var froze sync.Once
	err = wait(8*time.Second, func(uint64, uint64) {
		froze.Do(func() { testkit.Signal(t, srv, syscall.SIGSTOP) })
	})
	t.Logf("a replica frozen: %v", err)
	names(err, "not answering")

	testkit.Signal(t, srv, syscall.SIGCONT)
	if err := stuck.Exec(ctx, "SYSTEM START MERGES conversations_local"); err != nil {
		t.Fatal(err)
	}
	if err := wait(3*time.Minute, nil); err != nil {
		t.Fatalf("wait once the replica is back: %v", err)
	}
	var n uint64
	if err := stuck.QueryRow(ctx, "SELECT count() FROM conversations_local WHERE has(?, thread_id)", gone).Scan(&n); err != nil || n != 0 {
		t.Errorf("%s holds %d turns of the deleted threads after the wait (%v), want none", addr, n, err)
	}
}
