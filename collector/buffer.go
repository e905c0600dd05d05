package collector

import (
	"errors"
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// rows are rows of the tables the writer fills; the spool encodes them as
// they are. Staged rows come only from requests that wait for storage, so
// they are never kept or spooled.
type rows struct {
	Turns  []schema.Turn   `msgpack:"turns"`
	Spans  []schema.Span   `msgpack:"spans"`
	Staged []schema.Staged `msgpack:"-"`
}

func (r *rows) len() int { return len(r.Turns) + len(r.Spans) + len(r.Staged) }

// reset empties r, keeping its memory.
func (r *rows) reset() {
	clear(r.Turns)
	clear(r.Spans)
	clear(r.Staged)
	r.Turns, r.Spans, r.Staged = r.Turns[:0], r.Spans[:0], r.Staged[:0]
}

// failed returns the rows of r whose insert failed.
func (r rows) failed(res result) rows {
	var out rows
	if res.turns != nil {
		out.Turns = r.Turns
	}
	if res.spans != nil {
		out.Spans = r.Spans
	}
	return out
}

// rowOverhead approximates what a row holds besides its content and
// attributes: the struct, ids, names and slice headers.
const rowOverhead = 512

// sizeOf approximates the memory rows hold, for the byte bounds of the
// queue and the buffer.
func sizeOf(turns []schema.Turn, spans []schema.Span) int64 {
	n := rowOverhead * (len(turns) + len(spans))
	attrs := func(as []schema.Attr) {
		for _, a := range as {
			n += len(a.Key) + len(a.Value)
		}
	}
	for i := range turns {
		n += len(turns[i].Content) + len(turns[i].Error)
		attrs(turns[i].Attributes)
	}
	for i := range spans {
		n += len(spans[i].StatusMsg) + 16*len(spans[i].EventNames)
		attrs(spans[i].Attributes)
		attrs(spans[i].Resource)
	}
	return int64(n)
}

// buffer keeps the rows nobody waits for while storage fails: in memory,
// oldest first, up to the buffer size; past it the oldest go to the spool,
// or are lost without one. Only the writer goroutine uses it; its spool
// journals rows on the callers' goroutines too (WithDurableSpool).
type buffer struct {
	entries []*entry
	spool   *spool // nil without WithSpool
	replay  *entry // spool records being stored
}

type entry struct {
	rows
	size     int64
	refusals int // times the server refused these rows
}

// maxRefusals is how often ClickHouse may refuse kept rows (a bad value, a
// dropped table) before they are given up, so they cannot block the rows
// behind them for ever.
const maxRefusals = 5

func (b *buffer) empty() bool {
	return b.replay == nil && len(b.entries) == 0 && !b.spool.pending()
}

// keep buffers rows whose insert failed. A failed batch joins the newest
// entry while that stays under a batch, so that a recovery sends a few
// large inserts rather than one per failed batch.
func (w *writer) keep(r rows) {
	n := r.len()
	if n == 0 {
		return
	}
	size := sizeOf(r.Turns, r.Spans)
	b := &w.buf
	if last := len(b.entries) - 1; last >= 0 && b.entries[last].len()+n <= w.cfg.batchRows && b.entries[last].refusals == 0 {
		e := b.entries[last]
		e.Turns, e.Spans, e.size = append(e.Turns, r.Turns...), append(e.Spans, r.Spans...), e.size+size
	} else {
		b.entries = append(b.entries, &entry{rows: r, size: size})
	}
	w.buffered.Add(int64(n))
	w.bufferedBytes.Add(size)
	for w.bufferedBytes.Load() > w.cfg.bufferBytes && len(b.entries) > 0 {
		w.evict(errors.New("buffer full"))
	}
}

// evict takes the oldest entry out of memory, to the spool or lost.
func (w *writer) evict(reason error) {
	e := w.buf.entries[0]
	w.buf.entries[0] = nil
	w.buf.entries = w.buf.entries[1:]
	w.buffered.Add(-int64(e.len()))
	w.bufferedBytes.Add(-e.size)
	if w.buf.spool == nil {
		w.lose(e.len(), reason)
		return
	}
	if err := w.buf.spool.append(e.rows); err != nil {
		w.lose(e.len(), fmt.Errorf("%w; spool: %w", reason, err))
		return
	}
	w.spooled.Add(int64(e.len()))
}

// spill empties the buffer into the spool (or loses it) at shutdown. The
// spool records being replayed stay in their segment, replayed again later.
func (w *writer) spill() {
	reason := errors.New("not stored before shutdown")
	if e := w.lastErr.Load(); e != nil {
		reason = fmt.Errorf("not stored before shutdown: %s", *e)
	}
	for len(w.buf.entries) > 0 {
		w.evict(reason)
	}
	w.buf.replay = nil
	w.buf.spool.close()
}

// retry stores what the buffer keeps, oldest first (the spool's records,
// then memory's), and returns the error that stopped it.
func (w *writer) retry() error {
	b := &w.buf
	stored := 0
	defer func() {
		if stored > 0 {
			w.cfg.logger.Info("convtrace: stored rows kept while storage failed", "rows", stored)
		}
	}()
	for {
		if b.replay == nil {
			if r := b.spool.next(w.cfg.batchRows); r != nil {
				w.redact.rows(r.Turns, r.Spans) // spooled by an older process, or with redaction off
				for i := range r.Turns {
					w.cfg.prices.PriceTurn(&r.Turns[i]) // spooled by SpoolSpans unpriced
				}
				b.replay = &entry{rows: *r}
			}
		}
		e := b.replay
		if e == nil {
			if len(b.entries) == 0 {
				return nil
			}
			e = b.entries[0]
		}
		before := e.len()
		res := w.store(e.rows)
		e.rows = e.failed(res)
		stored += before - e.len()
		if e != b.replay {
			size := sizeOf(e.Turns, e.Spans)
			w.buffered.Add(int64(e.len() - before))
			w.bufferedBytes.Add(size - e.size)
			e.size = size
		}
		if err := errors.Join(res.turns, res.spans); err != nil {
			if !refusedByServer(err) {
				return err
			}
			if e.refusals++; e.refusals < maxRefusals {
				return err
			}
			err = fmt.Errorf("refused %d times: %w", e.refusals, err)
			w.lose(e.len(), err)
			if e == b.replay {
				b.spool.refused(err)
			}
		}
		if e == b.replay {
			b.replay = nil
		} else {
			w.buffered.Add(-int64(e.len()))
			w.bufferedBytes.Add(-e.size)
			b.entries[0] = nil
			b.entries = b.entries[1:]
		}
	}
}
