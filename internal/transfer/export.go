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
	"github.com/convtrace/convtrace/viewer/query"
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

// Export writes the threads f selects to w in format, thread by thread and
// a page of turns at a time, so that memory stays flat however many turns
// it writes: of each thread its metadata, its turns with their whole
// content, the spans of its traces and its notes. It returns what it
// wrote. A filter that selects no thread writes an export with none, but
// for one thread asked for by id: then nothing is written and the error
// is query.ErrNotFound.
func Export(ctx context.Context, db query.DB, w io.Writer, f query.ExportFilter, format Format, opts ...ExportOption) (Counts, error) {
	cfg := exportConfig{now: time.Now}
	for _, o := range opts {
		o.apply(&cfg)
	}
	store := query.New(db, 0, 0)
	threads, err := store.ExportThreads(ctx, f)
	if err != nil {
		return Counts{}, err
	}
	if f.ThreadID != "" && len(threads) == 0 {
		return Counts{}, fmt.Errorf("export thread %q: %w", f.ThreadID, query.ErrNotFound)
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
	for group := range slices.Chunk(threads, exportGroup) {
		if err := exportGroupOf(ctx, store, enc, group, &n); err != nil {
			return n, err
		}
		if done += len(group); cfg.progress != nil {
			cfg.progress(done, len(threads))
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

// exportGroup is how many threads an export reads the notes and stray
// spans of at once: one query each for the group, not one a thread.
const exportGroup = 256

// exportGroupOf writes a group of threads.
func exportGroupOf(ctx context.Context, store query.Store, enc encoder, group []query.ThreadRecord, n *Counts) error {
	ids := make([]string, len(group))
	for i := range group {
		ids[i] = group[i].ID
	}
	stray, err := store.StraySpans(ctx, ids)
	if err != nil {
		return err
	}
	notes, err := store.ExportNotes(ctx, ids)
	if err != nil {
		return err
	}
	for i := range group {
		t := &group[i]
		if err := exportThread(ctx, store, enc, t, stray[t.ID], notes[t.ID], n); err != nil {
			return fmt.Errorf("export thread %q: %w", t.ID, err)
		}
	}
	return nil
}

// exportThread writes one thread: its record, its turns a page at a time,
// the spans of the traces they belong to and the others that name it,
// and its notes.
func exportThread(ctx context.Context, store query.Store, enc encoder, t *query.ThreadRecord,
	stray []schema.Span, notes []query.Note, n *Counts) error {
	if err := enc.thread(t); err != nil {
		return err
	}
	n.Threads++
	traces := map[string]bool{}
	err := store.ExportTurns(ctx, t.ID, exportPage, func(turns []schema.Turn) error {
		for i := range turns {
			r := &turns[i]
			traces[r.TraceID] = true
			if err := enc.turn(&Turn{Turn: *r, HeartbeatNS: r.HeartbeatNS, Revision: r.Revision}); err != nil {
				return err
			}
		}
		n.Turns += int64(len(turns))
		return nil
	})
	if err != nil {
		return err
	}
	ids := slices.Sorted(maps.Keys(traces))
	err = store.ExportSpans(ctx, ids, func(s *schema.Span) error {
		n.Spans++
		return enc.span(s)
	})
	if err != nil {
		return err
	}
	for i := range stray {
		if err := enc.span(&stray[i]); err != nil {
			return err
		}
	}
	n.Spans += int64(len(stray))
	for i := range notes {
		if err := enc.note(&notes[i]); err != nil {
			return err
		}
	}
	n.Notes += int64(len(notes))
	return enc.endThread()
}

// encoder writes an export's parts in order: the header, then of each
// thread its record, turns, spans and notes, then the end.
type encoder interface {
	header(at time.Time) error
	thread(*query.ThreadRecord) error
	turn(*Turn) error
	span(*schema.Span) error
	note(*query.Note) error
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
func (e *linesEncoder) thread(t *query.ThreadRecord) error {
	return encode(e.enc, record{Type: typeThread, Thread: t})
}
func (e *linesEncoder) turn(t *Turn) error { return encode(e.enc, record{Type: typeTurn, Turn: t}) }
func (e *linesEncoder) span(s *schema.Span) error {
	return encode(e.enc, record{Type: typeSpan, Span: s})
}
func (e *linesEncoder) note(n *query.Note) error {
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

func (e *envelopeEncoder) thread(t *query.ThreadRecord) error {
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
func (e *envelopeEncoder) note(n *query.Note) error  { return e.item(3, n) }

func (e *envelopeEncoder) endThread() error {
	if err := e.open(len(threadParts)); err != nil {
		return err
	}
	return e.raw("}")
}

func (e *envelopeEncoder) close() error { return e.raw("\n]}\n") }
