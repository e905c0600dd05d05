package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// recordingDB is a real connection that notes the SQL it runs.
type recordingDB struct {
	DB
	mu  sync.Mutex
	sql []string
}

func (r *recordingDB) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	r.note(query)
	return r.DB.Query(ctx, query, args...)
}

func (r *recordingDB) Exec(ctx context.Context, query string, args ...any) error {
	r.note(query)
	return r.DB.Exec(ctx, query, args...)
}

func (r *recordingDB) note(query string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sql = append(r.sql, query)
}

// take returns the statements run since the last take that read
// conversations.
func (r *recordingDB) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var read []string
	for _, q := range r.sql {
		if strings.Contains(q, "FROM conversations") {
			read = append(read, strings.Join(strings.Fields(q), " "))
		}
	}
	r.sql = nil
	return read
}

func turnAt(thread, id string, startNS uint64, cost float64) schema.Turn {
	return schema.Turn{
		TurnID: id, TraceID: "t-" + thread, SpanID: "s-" + id, Project: "p", ThreadID: thread,
		Role: schema.RoleResponse, Content: "answer " + id, Provider: "openai", Model: "gpt-5",
		CostUSD: &cost, CostSource: schema.CostProvided, Status: "ok", StartNS: startNS,
	}
}

// A warm threads list reads nothing of conversations; a new insert makes
// it read that insert's part and recompute only its thread; a copy
// delivered again counts once; a merge reads nothing; a late turn in an
// old partition is seen; every number stays the direct one.
func TestThreadSummariesReadWhatChanged(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	db := &recordingDB{DB: conn}
	s := New(db, 100, time.Minute)
	now := uint64(time.Now().UnixNano())
	testkit.InsertTurns(t, conn, turnAt("a", "a1", now-3e9, 1), turnAt("b", "b1", now-2e9, 2))

	list := func(step string, reads int) map[string]string {
		t.Helper()
		page, err := s.Threads(ctx, ThreadFilter{Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := db.take(); len(got) != reads {
			t.Errorf("%s: %d statements read conversations, want %d:\n%s", step, len(got), reads, strings.Join(got, "\n"))
		}
		return threadTotals(page.Threads)
	}
	check := func(step string, got map[string]string, want map[string]string) {
		t.Helper()
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: thread %s has %q, want %s", step, id, got[id], w)
			}
		}
	}

	exec := func(sql string) {
		t.Helper()
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// Cold: one pass stores every summary with its fingerprint; no
	// thread has copies to fold again.
	check("cold", list("cold", 1), map[string]string{"a": "1 turns, $1", "b": "1 turns, $2"})
	check("warm", list("warm", 0), map[string]string{"a": "1 turns, $1", "b": "1 turns, $2"})

	// A new turn of a: its part's threads, their fingerprints, their
	// summaries; b's summary is not recomputed.
	before := testkit.SummaryVersions(t, conn)
	a2 := turnAt("a", "a2", now-1e9, 0.5)
	testkit.InsertTurns(t, conn, a2)
	check("new turn", list("new turn", 3), map[string]string{"a": "2 turns, $1.5", "b": "1 turns, $2"})
	after := testkit.SummaryVersions(t, conn)
	if after["a"] <= before["a"] || after["b"] != before["b"] {
		t.Errorf("after a new turn of a, computed_ns a %d -> %d, b %d -> %d; want a recomputed, b not", before["a"], after["a"], before["b"], after["b"])
	}

	testkit.InsertTurns(t, conn, a2)
	check("delivered again", list("delivered again", 3), map[string]string{"a": "2 turns, $1.5", "b": "1 turns, $2"})

	exec("OPTIMIZE TABLE conversations FINAL")
	check("merged", list("merged", 0), map[string]string{"a": "2 turns, $1.5", "b": "1 turns, $2"})

	// A late turn, two months back: a partition of its own.
	testkit.InsertTurns(t, conn, turnAt("c", "c1", now-60*24*uint64(time.Hour), 4))
	check("late turn", list("late turn", 3), map[string]string{"a": "2 turns, $1.5", "b": "1 turns, $2", "c": "1 turns, $4"})
	check("warm again", list("warm again", 0), map[string]string{"c": "1 turns, $4"})

	// Its partition dropped: no telling which threads lost rows, so every
	// fingerprint is read (a's no longer counts the copy the merge folded:
	// it is recomputed too), and c leaves the list.
	partition := time.Unix(0, int64(now-60*24*uint64(time.Hour))).UTC().Format("200601")
	exec("ALTER TABLE conversations DROP PARTITION " + partition)
	if got := list("dropped", 2); len(got) != 2 || got["c"] != "" {
		t.Errorf("after dropping c's partition the list holds %v, want a and b", got)
	}
}

func optionalCost(c *float64) string {
	if c == nil {
		return "NULL"
	}
	return fmt.Sprint(*c)
}

// Costs rewritten in place (convtrace reprice's mutation) leave the parts'
// block ranges as they were: an in-place Change recomputes the thread
// summaries of its range once done, and the list shows the new cost.
func TestInPlaceChangeRecomputesThreads(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, time.Minute)
	now := uint64(time.Now().UnixNano())
	testkit.InsertTurns(t, conn, turnAt("a", "a1", now-3e9, 1), turnAt("b", "b1", now-2e9, 2))
	cost := func() map[string]string {
		t.Helper()
		page, err := s.Threads(ctx, ThreadFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, th := range page.Threads {
			out[th.ID] = optionalCost(th.CostUSD)
		}
		return out
	}
	if got := fmt.Sprint(cost()); got != "map[a:1 b:2]" {
		t.Fatalf("costs before %s", got)
	}
	w, err := Begin(ctx, conn, Change{FromNS: now - 2e9, ToNS: now, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "ALTER TABLE conversations UPDATE cost_usd = cost_usd * 5 WHERE thread_id = 'b'"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND is_done = 0").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("mutation not done after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := w.Done(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cost()); got != "map[a:1 b:10]" {
		t.Errorf("costs after the mutation and its change: %s, want map[a:1 b:10]", got)
	}
}

// The first build summarizes every thread in one pass; a thread whose
// turns have copies (a batch delivered twice before anyone looked) is
// summarized again with them folded, and counts each turn once.
func TestFirstBuildFoldsCopies(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	db := &recordingDB{DB: conn}
	s := New(db, 100, time.Minute)
	now := uint64(time.Now().UnixNano())
	a1, a2, b1 := turnAt("a", "a1", now-3e9, 1), turnAt("a", "a2", now-2e9, 3), turnAt("b", "b1", now-2e9, 2)
	testkit.InsertTurns(t, conn, a1, a2, b1)
	testkit.InsertTurns(t, conn, a1, a2) // delivered again

	page, err := s.Threads(ctx, ThreadFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := threadTotals(page.Threads)
	if want := map[string]string{"a": "2 turns, $4", "b": "1 turns, $2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("first build: %v, want %v", got, want)
	}
	// The one pass, then thread a alone: its fingerprint and its folded
	// summary.
	if reads := db.take(); len(reads) != 3 || !strings.Contains(reads[1], "thread_id IN ?") || !strings.Contains(reads[2], "LIMIT 1 BY") {
		t.Errorf("first build read conversations %d times, want the pass, then a's fingerprint and folded summary:\n%s", len(reads), strings.Join(reads, "\n"))
	}
}

// threadTotals is each listed thread's turns and cost, by id.
func threadTotals(threads []Thread) map[string]string {
	out := map[string]string{}
	for _, th := range threads {
		out[th.ID] = fmt.Sprintf("%d turns, $%v", th.Turns, optionalCost(th.CostUSD))
	}
	return out
}

// On a cluster a partition's blocks are kept part by part: a replica may
// commit block 11 after 12, and a part of blocks read once is read no
// more, whatever merges make of them.
func TestSeenBlocksPartByPart(t *testing.T) {
	src := &partSource{replica: "r1:9000"}
	p := func(name string, lo, hi int64) part {
		return part{src: src, name: name, partition: "202611", blocks: blocks{lo, hi}}
	}
	seen := extend(seenParts{}, []part{p("a", 1, 10), p("c", 12, 12)}, nil)
	for _, c := range []struct {
		part part
		read bool
	}{
		{p("b", 11, 11), false}, // committed after 12: not read yet
		{p("m", 1, 10), true},   // a merge of what was read
		{p("m", 1, 12), false},  // a merge over block 11
		{p("d", 13, 13), false},
	} {
		if got := seen.covers(c.part); got != c.read {
			t.Errorf("blocks %v after reading 1–10 and 12: covered %v, want %v", c.part.blocks, got, c.read)
		}
	}
	seen = extend(seen, []part{p("b", 11, 11), p("d", 13, 13)}, map[string]bool{"r1:9000/d": true})
	if !seen.covers(p("m", 1, 12)) || seen.covers(p("d", 13, 13)) {
		t.Errorf("after reading 11 (and 13 merged away unread): %v", seen)
	}
	if got := seen[p("x", 0, 0).key()]; len(got) != 1 {
		t.Errorf("ranges of the partition %v, want 1–12 as one", got)
	}
	// Another replica read: its partitions are none that was read.
	other := part{src: &partSource{replica: "r2:9000"}, name: "a", partition: "202611", blocks: blocks{1, 10}}
	if seen.covers(other) || !dropped(seen, []part{other}) {
		t.Errorf("a part of another replica taken as read: %v", seen)
	}
}
