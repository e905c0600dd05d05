package transfer

import (
	"context"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// An import gathers records into batches and stores a batch at a time:
// it asks which of the batch's rows the database holds, and writes the
// others. A batch is bounded in rows and in content bytes, so memory
// stays flat whatever the export's size.
const (
	batchRows  = 10_000
	batchBytes = 16 << 20
)

// batch is records read to be stored together.
type batch struct {
	threads []store.ThreadRecord
	turns   []schema.Turn
	spans   []schema.Span
	notes   []store.Note
	bytes   int // of content, errors and memos
}

// add takes a valid record and reports whether the batch is full.
func (b *batch) add(rec *record) (full bool) {
	switch rec.Type {
	case typeThread:
		b.threads = append(b.threads, *rec.Thread)
	case typeTurn:
		b.turns = append(b.turns, rec.Turn.row())
		b.bytes += len(rec.Turn.Content) + len(rec.Turn.Error)
	case typeSpan:
		b.spans = append(b.spans, *rec.Span)
	case typeNote:
		b.notes = append(b.notes, *rec.Note)
		b.bytes += len(rec.Note.Memo)
	}
	return len(b.threads)+len(b.turns)+len(b.spans)+len(b.notes) >= batchRows || b.bytes >= batchBytes
}

// importer stores batches and counts what it stored and skipped.
type importer struct {
	conn  Conn
	store store.Store
	rows  *store.RowStore
	res   Result // the reader writes BadLines, the storer the counts

	// touched are the threads of which something was stored.
	touched map[string]bool
	seen    map[string]bool // threads whose record was read
	wait    time.Duration   // for the import lock
}

func newImporter(conn Conn, wait time.Duration) *importer {
	return &importer{res: Result{BadLines: []BadLine{}}, conn: conn, store: store.New(conn, 0, 0), rows: store.NewRowStore(conn),
		touched: map[string]bool{}, seen: map[string]bool{}, wait: wait}
}

// run stores the records read hands to its emit function, holding the
// database's import lock: read runs in a goroutine of its own, decoding
// and checking the next batch while the caller's stores the last one,
// and both end before run returns. It then counts the threads: imported
// when something of theirs was stored, else skipped.
func (imp *importer) run(ctx context.Context, read func(emit func(*record) error) error) error {
	unlock, err := lockImports(ctx, imp.store, imp.wait)
	if err != nil {
		return err
	}
	defer unlock()
	g, gctx := errgroup.WithContext(ctx)
	// Unbuffered: one batch read ahead of the one being stored.
	batches := make(chan *batch)
	g.Go(func() error {
		defer close(batches)
		b := &batch{}
		send := func() error {
			select {
			case batches <- b:
				b = &batch{}
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := read(func(rec *record) error {
			if b.add(rec) {
				return send()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return send()
	})
	g.Go(func() error {
		for b := range batches {
			if err := imp.flush(gctx, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	for id := range imp.seen {
		if imp.touched[id] {
			imp.res.Imported.Threads++
		} else {
			imp.res.Skipped.Threads++
		}
	}
	return nil
}

// flush stores a batch: turns, spans, notes, then the threads' metadata.
func (imp *importer) flush(ctx context.Context, b *batch) error {
	for _, t := range b.threads {
		imp.seen[t.ID] = true
	}
	steps := []func(context.Context, *batch) error{imp.flushTurns, imp.flushSpans, imp.flushNotes, imp.flushThreads}
	for _, step := range steps {
		if err := step(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (imp *importer) flushTurns(ctx context.Context, b *batch) error {
	if len(b.turns) == 0 {
		return nil
	}
	key := func(t *schema.Turn) store.RowKey { return store.RowKey{t.ThreadID, t.TurnID} }
	stored, err := imp.store.StoredTurns(ctx, keys(b.turns, key))
	if err != nil {
		return err
	}
	turns := fresh(b.turns, key, stored, &imp.res.Skipped.Turns)
	for i := range turns {
		imp.touched[turns[i].ThreadID] = true
	}
	if err := imp.rows.Store(ctx, turns, nil); err != nil {
		return err
	}
	imp.res.Imported.Turns += int64(len(turns))
	return nil
}

func (imp *importer) flushSpans(ctx context.Context, b *batch) error {
	if len(b.spans) == 0 {
		return nil
	}
	key := func(s *schema.Span) store.RowKey { return store.RowKey{s.TraceID, s.SpanID} }
	stored, err := imp.store.StoredSpans(ctx, keys(b.spans, key))
	if err != nil {
		return err
	}
	spans := fresh(b.spans, key, stored, &imp.res.Skipped.Spans)
	for i := range spans {
		imp.touched[spans[i].ThreadID] = true
	}
	if err := imp.rows.Store(ctx, nil, spans); err != nil {
		return err
	}
	imp.res.Imported.Spans += int64(len(spans))
	return nil
}

// fresh returns the rows of batch that stored does not hold, each once,
// adding the others to skipped.
func fresh[R any](batch []R, key func(*R) store.RowKey, stored map[store.RowKey]bool, skipped *int64) []R {
	var out []R
	for i := range batch {
		k := key(&batch[i])
		if stored[k] {
			*skipped++
			continue
		}
		stored[k] = true // a row twice in the batch is stored once
		out = append(out, batch[i])
	}
	return out
}

// flushNotes stores the notes newer than the database's note of their
// turn: an older one, or the same, would change nothing.
func (imp *importer) flushNotes(ctx context.Context, b *batch) error {
	if len(b.notes) == 0 {
		return nil
	}
	versions, err := imp.store.NoteVersions(ctx, ids(b.notes, func(n *store.Note) string { return n.ThreadID }))
	if err != nil {
		return err
	}
	var fresh []store.Note
	for _, n := range b.notes {
		k := store.RowKey{n.ThreadID, n.TurnID}
		if versions[k] >= n.UpdatedNS {
			imp.res.Skipped.Notes++
			continue
		}
		versions[k] = n.UpdatedNS
		fresh = append(fresh, n)
		imp.touched[n.ThreadID] = true
	}
	if err := store.InsertNotes(ctx, imp.conn, fresh); err != nil {
		return err
	}
	imp.res.Imported.Notes += int64(len(fresh))
	return nil
}

// flushThreads stores the threads' metadata newer than the database's.
func (imp *importer) flushThreads(ctx context.Context, b *batch) error {
	if len(b.threads) == 0 {
		return nil
	}
	versions, err := imp.store.MetaVersions(ctx, ids(b.threads, func(t *store.ThreadRecord) string { return t.ID }))
	if err != nil {
		return err
	}
	var fresh []store.ThreadRecord
	for _, t := range b.threads {
		k := store.RowKey{t.ID}
		if t.UpdatedNS > versions[k] {
			versions[k] = t.UpdatedNS
			fresh = append(fresh, t)
			imp.touched[t.ID] = true
		}
	}
	return store.InsertThreadMeta(ctx, imp.conn, fresh)
}

// keys returns the distinct keys of rows, sorted.
func keys[R any](rows []R, key func(*R) store.RowKey) []store.RowKey {
	out := make([]store.RowKey, len(rows))
	for i := range rows {
		out[i] = key(&rows[i])
	}
	slices.SortFunc(out, func(a, b store.RowKey) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	return slices.Compact(out)
}

// ids returns the distinct ids of rows, sorted.
func ids[R any](rows []R, id func(*R) string) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = id(&rows[i])
	}
	slices.Sort(out)
	return slices.Compact(out)
}
