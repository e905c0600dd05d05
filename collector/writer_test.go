package collector

import (
	"context"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// TestInsertErrorFailsOnlyItsRequests makes the conversations insert fail
// (its table renamed away) while the spans insert succeeds, in one batch:
// only the requests with turns in it are told an error.
func TestInsertErrorFailsOnlyItsRequests(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "RENAME TABLE conversations TO conversations_away"); err != nil {
		t.Fatal(err)
	}
	cfg, err := configure([]Option{WithLogger(discardLogger())}, Option.applyExporter)
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{cfg: cfg, dial: dialDSN(dsn), early: map[string]uint64{}}
	defer func() { _ = w.conn.Close() }()
	turn := func(id string) schema.Turn {
		return schema.Turn{TurnID: id, SpanID: id, Role: schema.RolePrompt, Content: "c"}
	}
	span := func(id string) schema.Span { return schema.Span{TraceID: "t", SpanID: id} }
	items := map[string]item{
		"spans only": {spans: []schema.Span{span("s1")}},
		"turns only": {turns: []schema.Turn{turn("t2")}},
		"both":       {turns: []schema.Turn{turn("t3")}, spans: []schema.Span{span("s3")}},
	}
	var p pending
	for name, it := range items {
		it.stored = make(chan error, 1)
		items[name] = it
		w.add(&p, it)
	}
	w.add(&p, item{turns: []schema.Turn{turn("kept")}}) // nobody waits: kept to retry
	w.send(&p)
	for name, it := range items {
		err := <-it.stored
		wantErr := len(it.turns) > 0
		t.Logf("%s: told %v", name, err)
		if (err != nil) != wantErr || err != nil && !strings.Contains(err.Error(), "write conversations") {
			t.Errorf("%s: told %v, want an error: %v (only the conversations insert's)", name, err, wantErr)
		}
	}
	var spans uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM spans").Scan(&spans); err != nil {
		t.Fatal(err)
	}
	st := w.stats()
	t.Logf("spans stored %d, stats %+v", spans, st)
	if spans != 2 || st.Written != 2 || st.Refused != 2 || st.Buffered != 1 {
		t.Errorf("want 2 spans stored, 2 turns refused to their callers, the unwaited turn kept")
	}
}

// TestQueueBoundedInBytes refuses a request larger than the queue's byte
// bound to a caller that waits, and loses it (counted) for one that does
// not.
func TestQueueBoundedInBytes(t *testing.T) {
	cfg, err := configure([]Option{WithQueueBytes(1 << 20), WithLogger(discardLogger())}, Option.applyExporter)
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(dialDSN("clickhouse://127.0.0.1:1/none"), cfg)
	defer w.shutdown(context.Background())
	big := item{turns: []schema.Turn{{TurnID: "big", Content: strings.Repeat("x", 2<<20)}}}
	if err := w.writeWait(context.Background(), big); err != errQueueFull {
		t.Errorf("writeWait of 2 MiB into a 1 MiB queue: %v, want errQueueFull", err)
	}
	if w.write(big) {
		t.Errorf("write of 2 MiB into a 1 MiB queue accepted")
	}
	if st := w.stats(); st.Refused != 1 || st.Lost != 1 || st.Queued != 0 || st.QueuedBytes != 0 {
		t.Errorf("stats %+v, want 1 refused (writeWait) and 1 lost (write), nothing queued", st)
	}
}
