package store

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/failpoint"
)

// Removal is what a deletion or a prune removes, or would.
type Removal struct {
	Threads uint64 `json:"threads"`
	Turns   uint64 `json:"turns"` // distinct turns, copies counted once
	Bytes   uint64 `json:"bytes"` // of stored content
	Spans   uint64 `json:"spans"`
	Notes   uint64 `json:"notes"`
}

// Add adds o's counts to r's.
func (r *Removal) Add(o Removal) {
	r.Threads += o.Threads
	r.Turns += o.Turns
	r.Bytes += o.Bytes
	r.Spans += o.Spans
	r.Notes += o.Notes
}

// selectThreadTurns reads the turns of {thread}, their bytes and the span
// of their starts, in one pass; selectThreadRest what it holds elsewhere.
const (
	selectThreadTurns = `
SELECT uniqExact(turn_id), sum(length(content)), min(start_ns), max(start_ns)
FROM conversations
WHERE thread_id = {thread}`
	selectThreadRest = `
SELECT
    (SELECT uniqExact(span_id) FROM spans WHERE thread_id = {thread}) AS thread_spans,
    (SELECT uniqExact(turn_id) FROM turn_notes WHERE thread_id = {thread}) AS thread_notes,
    (SELECT count() FROM thread_meta WHERE thread_id = {thread}) AS thread_metas,
    (SELECT count() FROM thread_summary WHERE thread_id = {thread}) AS thread_summaries`
)

// Failpoints of a deletion (package failpoint).
const (
	FailDeleteSubmitted   = "delete.submitted"    // a table's deletion submitted
	FailThreadRowsDeleted = "delete.rows_deleted" // a thread's rows gone, its summary not
)

// threadTables are the tables that hold a thread's rows, each with a
// thread_id column: what DeleteThread removes before its summary.
var threadTables = []string{"conversations", "spans", "messages", "turn_notes", "thread_meta", "cost_thread_daily", "thread_shells",
	"trace_threads", "thread_traces", "latency_crossing", "latency_errors"}

// ThreadSize returns what deleting thread id would remove; ErrNotFound
// when it holds nothing.
func (s Store) ThreadSize(ctx context.Context, id string) (Removal, error) {
	r, _, err := s.threadSize(ctx, id)
	return r, err
}

func (s Store) threadSize(ctx context.Context, id string) (Removal, [2]uint64, error) {
	var (
		r                Removal
		days             [2]uint64
		metas, summaries uint64
	)
	thread := holes{"thread": arg(id)}
	if err := queryRow(ctx, s.db, sqlf(selectThreadTurns, thread), &r.Turns, &r.Bytes, &days[0], &days[1]); err != nil {
		return Removal{}, days, fmt.Errorf("read the turns of thread %s: %w", id, err)
	}
	if err := queryRow(ctx, s.db, sqlf(selectThreadRest, thread), &r.Spans, &r.Notes, &metas, &summaries); err != nil {
		return Removal{}, days, fmt.Errorf("read the size of thread %s: %w", id, err)
	}
	if r.Turns == 0 && r.Spans == 0 && r.Notes == 0 && metas == 0 && summaries == 0 {
		return Removal{}, days, ErrNotFound
	}
	r.Threads = 1
	return r, [2]uint64{days[0] / schema.DayNS, days[1] / schema.DayNS}, nil
}

// DeleteThread removes thread id and all it holds, summaries last, keeping
// the summaries exact (docs/design/removal.md). It returns what it removed;
// ErrNotFound when the thread holds nothing. progress hears of the mutations
// it waits for on servers without lightweight deletes.
func (s Store) DeleteThread(ctx context.Context, id string, progress func(mutations, parts uint64)) (Removal, error) {
	r, days, err := s.threadSize(ctx, id)
	if err != nil {
		return Removal{}, err
	}
	m, err := ddl.NewMutator(ctx, s.db)
	if err != nil {
		return Removal{}, err
	}
	// A thread whose turns a removal cut short took already has no day
	// of cost left to mark: only its summary, maybe more, is left.
	change := Change{Days: []uint32{}}
	if r.Turns > 0 {
		change = Change{FromNS: days[0] * schema.DayNS, ToNS: (days[1] + 1) * schema.DayNS}
	}
	w, err := Begin(ctx, s.db, change)
	if err != nil {
		return Removal{}, err
	}
	if err := s.deleteFrom(ctx, m, threadTables, ofThread(id), progress); err != nil {
		return Removal{}, err
	}
	failpoint.Hit(FailThreadRowsDeleted)
	if err := w.Done(ctx); err != nil {
		return Removal{}, err
	}
	if err := s.deleteFrom(ctx, m, []string{"thread_summary"}, ofThread(id), progress); err != nil {
		return Removal{}, err
	}
	return r, nil
}

// ofThread is the condition on a thread's rows.
func ofThread(id string) sqlText { return sqlf("thread_id = {id}", holes{"id": arg(id)}) }

// deleteFrom deletes from each of tables the rows cond selects, then waits
// for the deletions to be done.
func (s Store) deleteFrom(ctx context.Context, m ddl.Mutator, tables []string, cond sqlText, progress func(mutations, parts uint64)) error {
	for _, table := range tables {
		if err := m.Delete(ctx, s.db, table, cond.text, cond.args...); err != nil {
			return err
		}
		failpoint.Hit(FailDeleteSubmitted)
	}
	return m.Wait(ctx, s.db, tables, progress)
}
