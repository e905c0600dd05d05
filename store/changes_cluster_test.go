package store

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// On a cluster the summaries follow what changed as on one server: a warm
// list reads nothing of conversations, new rows from two writers, a copy
// delivered again, a late turn and a merge are read part by part, never by
// reading every thread; the pinned replica of a shard killed, the list
// reads every thread once on the next, and stays exact; back, the same.
func TestThreadSummariesFollowChangesOnCluster(t *testing.T) {
	c, _, _ := testkit.OpenCluster(t)
	// Every refresh asks which replica answers first: the one pinned is
	// chosen again as soon as it is back.
	defer func(d time.Duration) { pinFor = d }(pinFor)
	pinFor = 0
	servers := c.Servers() // s1r1, s1r2, s2r1, s2r2
	ctx := context.Background()
	open := func(i int) *topology.Conn {
		t.Helper()
		dsn, err := topology.DSNWithCluster(servers[i].DSN("convtrace"), c.Name)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ddl.OpenExisting(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	// The store's own connection is to a replica it does not pin, so
	// that killing a pinned one leaves it standing.
	conn := open(1)
	db := &recordingDB{DB: conn}
	s := New(db, 100, time.Minute).WithReplicas(func(_ context.Context, addr string) (DB, error) {
		return conn.Cluster().At(addr)
	})
	writers := []*topology.Conn{conn, open(3)}
	now := uint64(time.Now().UnixNano())
	want := map[string]string{}
	write := func(w int, thread, id string, start uint64, cost float64, turns int) {
		t.Helper()
		testkit.InsertTurns(t, writers[w], turnAt(thread, id, start, cost))
		want[thread] = fmt.Sprintf("%d turns, $%v", turns, cost*float64(turns))
	}
	// The list gives what was written within a while (replicas catch
	// up), reading every thread's fingerprint or not, as said.
	list := func(step string, everyThread bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		var got map[string]string
		full := false
		for {
			page, err := s.Threads(ctx, ThreadFilter{Limit: 100})
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			for _, q := range db.take() {
				full = full || strings.Contains(q, "FROM conversations WHERE 1 GROUP BY")
			}
			if got = threadTotals(page.Threads); fmt.Sprint(got) == fmt.Sprint(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: list %v, want %v", step, got, want)
		}
		if full != everyThread {
			t.Errorf("%s: read every thread's fingerprint %v, want %v", step, full, everyThread)
		}
	}

	for i := range 8 {
		write(i%2, fmt.Sprintf("th%d", i), fmt.Sprintf("a%d", i), now-uint64(10+i)*1e9, 1, 1)
	}
	list("cold", false) // the first build reads every thread, in one pass
	list("warm", false)
	if got := db.take(); len(got) != 0 {
		t.Errorf("a warm list read conversations:\n%s", strings.Join(got, "\n"))
	}

	write(0, "th0", "b0", now-5e9, 1, 2)
	write(1, "th5", "b5", now-4e9, 1, 2)
	list("new turns from two writers", false)
	write(1, "th5", "b5", now-4e9, 1, 2)
	list("a copy delivered again", false)
	write(0, "th1", "c1", now-60*24*uint64(time.Hour), 1, 2)
	list("a late turn two months back", false)
	for _, i := range []int{0, 2} {
		one, err := ddl.OpenExisting(ctx, servers[i].DSN("convtrace"))
		if err != nil {
			t.Fatal(err)
		}
		if err := one.Exec(ctx, "OPTIMIZE TABLE conversations"+ddl.LocalSuffix+" FINAL"); err != nil {
			t.Fatal(err)
		}
		one.Close()
	}
	list("merged", false)

	// The pinned replica of shard 1 killed: shard 1 is read on its other
	// replica now, which the summaries' state does not know.
	testkit.Signal(t, servers[0], syscall.SIGKILL)
	<-servers[0].Exited()
	write(0, "th2", "d2", now-3e9, 1, 2)
	list("the pinned replica of shard 1 killed", true)
	write(1, "th3", "d3", now-2e9, 1, 2)
	list("written on, shard 1 read on its other replica", false)
	testkit.Restart(t, servers[0])
	write(0, "th4", "d4", now-1e9, 1, 2)
	list("the pinned replica back", true)
	list("warm once back", false)
}
