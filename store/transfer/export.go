package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// exportPage is how many turns an export reads and holds at a time.
const exportPage = 1000

// ExportOption configures Export.
type ExportOption interface{ apply(*exportConfig) }

type exportConfig struct {
	progress func(done, total int)
	now      func() time.Time
}

type exportOptionFunc func(*exportConfig)

func (f exportOptionFunc) apply(c *exportConfig) { f(c) }

// WithProgress has Export call fn after each thread it wrote, with the
// number written and the number it writes in all.
func WithProgress(fn func(done, total int)) ExportOption {
	return exportOptionFunc(func(c *exportConfig) { c.progress = fn })
}

// Export writes the threads f selects to w in format, a page of turns at a
// time so memory stays flat, and returns what it wrote. One thread asked for
// by id and not found writes nothing and returns store.ErrNotFound.
func Export(ctx context.Context, db store.DB, w io.Writer, f store.ExportFilter, format Format, opts ...ExportOption) (Counts, error) {
	cfg := exportConfig{now: time.Now}
	for _, o := range opts {
		o.apply(&cfg)
	}
	st := store.New(db, 0, 0)
	threads, err := st.ExportThreads(ctx, f)
	if err != nil {
		return Counts{}, err
	}
	if f.ThreadID != "" && len(threads) == 0 {
		return Counts{}, fmt.Errorf("export thread %q: %w", f.ThreadID, store.ErrNotFound)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var enc encoder
	switch format {
	case JSON:
		enc = &envelopeEncoder{enc: newJSON(bw), w: bw}
	case JSONL:
		enc = &linesEncoder{enc: newJSON(bw)}
	default:
		return Counts{}, fmt.Errorf("export format %q: not json or jsonl", format)
	}
	var n Counts
	if err := enc.header(cfg.now()); err != nil {
		return n, err
	}
	done := 0
	for len(threads) > 0 {
		group := nextGroup(threads)
		threads = threads[len(group):]
		var err error
		if len(group) == 1 && group[0].Turns > groupTurns {
			err = exportLong(ctx, st, enc, &group[0], &n)
		} else {
			err = exportGroupOf(ctx, st, enc, group, &n)
		}
		if err != nil {
			return n, err
		}
		if done += len(group); cfg.progress != nil {
			cfg.progress(done, done+len(threads))
		}
	}
	if err := enc.close(); err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write export: %w", err)
	}
	return n, nil
}

// An export reads threads in groups of at most groupThreads threads and
// groupTurns rows, a query per group for each kind of record; a longer thread
// is read alone (docs/design/transfer.md).
const groupThreads = 256

var groupTurns uint64 = 50_000 // a variable for the tests (export_test.go)

// nextGroup returns the threads the next group takes from the start of
// threads.
func nextGroup(threads []store.ThreadRecord) []store.ThreadRecord {
	var rows uint64
	var idBytes int
	for i := range threads {
		rows += threads[i].Turns
		idBytes += len(threads[i].ID) + 4
		if i == groupThreads || i > 0 && (rows > groupTurns || idBytes > store.MaxListBytes) {
			return threads[:i]
		}
	}
	return threads
}

// exportGroupOf writes a group of threads.
func exportGroupOf(ctx context.Context, st store.Store, enc encoder, group []store.ThreadRecord, n *Counts) error {
	ids := make([]string, len(group))
	for i := range group {
		ids[i] = group[i].ID
	}
	spans, err := st.ExportGroupSpans(ctx, ids)
	if err != nil {
		return err
	}
	notes, err := st.ExportNotes(ctx, ids)
	if err != nil {
		return err
	}
	// The turns come thread by thread in id order, as the group is: each
	// thread's record is written before its first turn, its spans and
	// notes after its last.
	cur := -1
	end := func() error {
		id := group[cur].ID
		return endThread(enc, spans[id], notes[id], n)
	}
	advance := func(to string) error {
		for cur < 0 || group[cur].ID != to {
			if cur >= 0 {
				if err := end(); err != nil {
					return err
				}
			}
			if cur++; cur == len(group) {
				return fmt.Errorf("export: a turn of thread %q out of its group's order", to)
			}
			if err := enc.thread(&group[cur]); err != nil {
				return err
			}
			n.Threads++
		}
		return nil
	}
	err = st.ExportGroupTurns(ctx, ids, exportPage, func(turns []schema.Turn) error {
		for i := range turns {
			r := &turns[i]
			if cur < 0 || r.ThreadID != group[cur].ID {
				if err := advance(r.ThreadID); err != nil {
					return err
				}
			}
			if err := enc.turn(exportTurn(r)); err != nil {
				return err
			}
			n.Turns++
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Threads whose turns went meanwhile are written without.
	if err := advance(group[len(group)-1].ID); err != nil {
		return err
	}
	return end()
}

// exportLong writes a thread too long for a group: its turns a page at a
// time, then the spans of the traces they belong to and the others that
// name it, and its notes.
func exportLong(ctx context.Context, st store.Store, enc encoder, t *store.ThreadRecord, n *Counts) error {
	if err := enc.thread(t); err != nil {
		return err
	}
	n.Threads++
	traces := map[string]bool{}
	err := st.ExportTurns(ctx, t.ID, exportPage, func(turns []schema.Turn) error {
		for i := range turns {
			r := &turns[i]
			traces[r.TraceID] = true
			if err := enc.turn(exportTurn(r)); err != nil {
				return err
			}
		}
		n.Turns += int64(len(turns))
		return nil
	})
	if err != nil {
		return err
	}
	err = st.ExportSpans(ctx, slices.Sorted(maps.Keys(traces)), func(s *schema.Span) error {
		n.Spans++
		return enc.span(s)
	})
	if err != nil {
		return err
	}
	stray, err := st.StraySpans(ctx, []string{t.ID})
	if err != nil {
		return err
	}
	notes, err := st.ExportNotes(ctx, []string{t.ID})
	if err != nil {
		return err
	}
	return endThread(enc, stray[t.ID], notes[t.ID], n)
}

// endThread writes the thread's spans and notes, and ends it.
func endThread(enc encoder, spans []schema.Span, notes []store.Note, n *Counts) error {
	for i := range spans {
		if err := enc.span(&spans[i]); err != nil {
			return err
		}
	}
	for i := range notes {
		if err := enc.note(&notes[i]); err != nil {
			return err
		}
	}
	n.Spans += int64(len(spans))
	n.Notes += int64(len(notes))
	return enc.endThread()
}

// encoder writes an export's parts in order: the header, then of each
// thread its record, turns, spans and notes, then the end.
type encoder interface {
	header(at time.Time) error
	thread(*store.ThreadRecord) error
	turn(*Turn) error
	span(*schema.Span) error
	note(*store.Note) error
	endThread() error
	close() error
}

// newJSON returns an encoder of one JSON value a line that leaves <, >
// and & as they are: content reads as it was said.
func newJSON(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

func encode(enc *json.Encoder, v any) error {
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

// linesEncoder writes JSONL: one record a line.
type linesEncoder struct{ enc *json.Encoder }

func (e *linesEncoder) header(at time.Time) error {
	v := SchemaVersion
	return encode(e.enc, record{Type: typeHeader, SchemaVersion: &v, ExportedAt: at.UTC().Format(time.RFC3339)})
}
func (e *linesEncoder) thread(t *store.ThreadRecord) error {
	return encode(e.enc, record{Type: typeThread, Thread: t})
}
func (e *linesEncoder) turn(t *Turn) error { return encode(e.enc, record{Type: typeTurn, Turn: t}) }
func (e *linesEncoder) span(s *schema.Span) error {
	return encode(e.enc, record{Type: typeSpan, Span: s})
}
func (e *linesEncoder) note(n *store.Note) error {
	return encode(e.enc, record{Type: typeNote, Note: n})
}
func (e *linesEncoder) endThread() error { return nil }
func (e *linesEncoder) close() error     { return nil }

// envelopeEncoder writes the JSON envelope, a value at a time: each of a
// thread's arrays is opened when its first element comes, or when a later
// part does.
type envelopeEncoder struct {
	enc     *json.Encoder
	w       *bufio.Writer
	threads int // written so far
	part    int // of the thread being written: 0 its record, 1 turns, 2 spans, 3 notes
	items   int // in the open array
}

var threadParts = [...]string{"", "turns", "spans", "notes"}

func (e *envelopeEncoder) raw(s string) error {
	if _, err := e.w.WriteString(s); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

func (e *envelopeEncoder) header(at time.Time) error {
	return e.raw(fmt.Sprintf("{\"schemaVersion\":%d,\"exportedAt\":%q,\"threads\":[\n", SchemaVersion, at.UTC().Format(time.RFC3339)))
}

func (e *envelopeEncoder) thread(t *store.ThreadRecord) error {
	sep := "{\"thread\":"
	if e.threads > 0 {
		sep = ",\n" + sep
	}
	e.threads++
	e.part, e.items = 0, 0
	if err := e.raw(sep); err != nil {
		return err
	}
	return encode(e.enc, t)
}

// item writes v into the thread's part array, opening the arrays up to it.
func (e *envelopeEncoder) item(part int, v any) error {
	if err := e.open(part); err != nil {
		return err
	}
	if e.items > 0 {
		if err := e.raw(","); err != nil {
			return err
		}
	}
	e.items++
	return encode(e.enc, v)
}

// open closes the open array and opens the next ones up to part.
func (e *envelopeEncoder) open(part int) error {
	for e.part < part {
		if e.part > 0 {
			if err := e.raw("]"); err != nil {
				return err
			}
		}
		e.part++
		e.items = 0
		if e.part < len(threadParts) {
			if err := e.raw(",\"" + threadParts[e.part] + "\":[\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *envelopeEncoder) turn(t *Turn) error        { return e.item(1, t) }
func (e *envelopeEncoder) span(s *schema.Span) error { return e.item(2, s) }
func (e *envelopeEncoder) note(n *store.Note) error  { return e.item(3, n) }

func (e *envelopeEncoder) endThread() error {
	if err := e.open(len(threadParts)); err != nil {
		return err
	}
	return e.raw("}")
}

func (e *envelopeEncoder) close() error { return e.raw("\n]}\n") }
