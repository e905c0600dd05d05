package collector

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/time/rate"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// item is one hand-over to the writer: the rows of some spans, or a flush
// request (flushed is closed once everything before it is written).
type item struct {
	// sdk are in-process spans not mapped yet: the writer goroutine maps
	// them (mapped), so that a pipeline's span.End only hands them over.
	// sdkRows and sdkSize are their estimate for the queue bounds.
	sdk              []sdktrace.ReadOnlySpan
	sdkRows, sdkSize int64

	turns     []schema.Turn
	spans     []schema.Span
	staged    []schema.Staged // halves of OTLP calls waiting to be joined
	sanitised int64           // invalid usage values in the spans, stored as unknown
	early     bool            // prompt rows of calls still running
	stored    chan error      // when set, told whether the rows were stored
	seg       *segment        // the spool segment that journaled the rows (WithDurableSpool)
	flushed   chan struct{}
}

// addSpan adds the spans row of s, counting its invalid usage values.
func (it *item) addSpan(s mapping.Span) {
	row, sanitised := mapping.SpanRow(s)
	it.spans = append(it.spans, row)
	it.sanitised += int64(sanitised)
}

func (it *item) rows() int64 {
	if it.sdk != nil {
		return it.sdkRows
	}
	return int64(len(it.turns) + len(it.spans) + len(it.staged))
}

// size approximates the memory the item's rows hold.
func (it *item) size() int64 {
	if it.sdk != nil {
		return it.sdkSize
	}
	n := sizeOf(it.turns, it.spans)
	for i := range it.staged {
		n += int64(rowOverhead + len(it.staged[i].Payload))
	}
	return n
}

// errQueueFull means the writer's queue has no room for a request's rows.
var errQueueFull = errors.New("write queue full")

// writer batches rows in one goroutine and writes them with clickhouse-go
// batches: it holds a batch open only while sending it, never across the
// batching window. Rows nobody waits for are kept when their insert fails
// (buffer.go) and stored in order once storage answers again.
type writer struct {
	cfg  config
	dial dialer
	conn BatchConn

	queue                   *queue
	queued, queuedBytes     atomic.Int64
	buffered, bufferedBytes atomic.Int64
	spooled, written        atomic.Int64
	refused, lost           atomic.Int64
	lastErr                 atomic.Pointer[string]
	unreported              atomic.Int64 // lost rows not yet in a warning
	lossLog                 rate.Sometimes
	finished                chan struct{}
	connected               atomic.Bool       // whether the last connect or write reached storage
	buf                     buffer            // used only by the writer goroutine
	gate                    backoff           // spaces attempts after a failure; writer goroutine only
	early                   map[string]uint64 // promptKey of each prompt stored early, by turn id
	sanitised               atomic.Int64      // see Stats.ValuesSanitised
	resumeUnknown           atomic.Int64      // see Stats.ResumeFailuresUnrecognised
	sentLarge               bool              // a large batch was sent since memory was last freed; writer goroutine only
	redact                  *redactor         // nil when redaction is off
	sdk                     mapping.SDKReader // writer goroutine only
	history                 store.History     // writer goroutine only
}

func newWriter(d dialer, cfg config) *writer {
	w := &writer{
		cfg:      cfg,
		dial:     d,
		queue:    newQueue(),
		finished: make(chan struct{}),
		early:    make(map[string]uint64),
		lossLog:  rate.Sometimes{Interval: 10 * time.Second},
		buf:      buffer{spool: newSpool(cfg.spoolDir, cfg.logger)},
		redact:   newRedactor(cfg.redact, cfg.redactExtra),
	}
	go w.run()
	return w
}

// write hands rows to the writer without waiting, preparing them on the
// caller's goroutine (in-process spans on the writer's, unless journaled).
// It returns false when the queue is full or the writer stopped: the rows
// are then refused, spooled when journaled, or lost (docs/design/writer.md).
func (w *writer) write(it item) bool {
	journal := w.cfg.durableSpool && it.stored == nil
	switch {
	case it.sdk == nil:
		w.prepare(&it)
	case journal:
		it = w.mapped(&mapping.SDKReader{}, it)
	}
	n, size := it.rows(), it.size()
	admit := func() error {
		rows, bytes := w.queued.Add(n), w.queuedBytes.Add(size)
		if rows <= int64(w.cfg.queueRows) && bytes <= w.cfg.queueBytes {
			return nil
		}
		w.queued.Add(-n)
		w.queuedBytes.Add(-size)
		return errQueueFull
	}
	var err error
	if journal && n > 0 {
		var spooled bool
		spooled, err = w.buf.spool.journal(rows{Turns: it.turns, Spans: it.spans}, func(seg *segment) error {
			it.seg = seg
			return w.queue.put(it, admit)
		})
		if spooled {
			w.spooled.Add(n)
			return false
		}
	} else {
		err = w.queue.put(it, admit)
	}
	if err != nil {
		w.reject(it, n, err)
		return false
	}
	return true
}

// prepare redacts and prices the turns of it, so that every path to
// storage (exporter, ingester, joined calls, pending prompts) stores no
// well-known secret and the priced cost of a known model; schema's
// Turn.Values gives the others their source.
func (w *writer) prepare(it *item) {
	w.redact.item(it)
	for i := range it.turns {
		w.cfg.prices.PriceTurn(&it.turns[i])
		if it.turns[i].Role == cliagent.KindWarning && hasCode(it.turns[i].Attributes, cliagent.CodeResumeFailedUnrecognised) {
			w.resumeUnknown.Add(1)
		}
	}
	w.sanitised.Add(it.sanitised)
}

// mapped returns the rows of an item of in-process spans, prepared.
func (w *writer) mapped(sdk *mapping.SDKReader, it item) item {
	r, sanitised := rowsOf(sdk, it.sdk)
	m := item{turns: r.Turns, spans: r.Spans, sanitised: sanitised}
	w.prepare(&m)
	return m
}

// writeWait hands rows to the writer and waits until they are stored,
// returning the storage error when they were not.
func (w *writer) writeWait(ctx context.Context, it item) error {
	it.stored = make(chan error, 1)
	if !w.write(it) {
		return errQueueFull
	}
	select {
	case err := <-it.stored:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush waits until every row handed over before it has been written or
// kept for a retry, or ctx ends.
func (w *writer) flush(ctx context.Context) error {
	done := make(chan struct{})
	if w.queue.put(item{flushed: done}, func() error { return nil }) != nil {
		return nil // shut down: nothing more will be written
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown stops taking rows, writes what is queued and kept (spooling what
// storage does not take) and waits for the writer to finish, or for ctx to
// end. It is safe to call more than once.
func (w *writer) shutdown(ctx context.Context) error {
	w.queue.close()
	select {
	case <-w.finished:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutdown writer: %w", ctx.Err())
	}
}

// Group commit bounds: see run.
const (
	minGap   = 20 * time.Millisecond
	loadRows = 5000
)

// run gathers rows into batches (group commit): a batch is sent when full,
// or once a gap, growing with the last batch from minGap to the flush
// interval, has passed since the last send; kept rows are retried when the
// back-off allows. Why: docs/design/writer.md, "Group commit".
func (w *writer) run() {
	defer close(w.finished)
	// Connect at once, so the first rows need not wait for it and readiness
	// shows early; a failure here is retried with the first batch.
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.writeTimeout)
	if err := w.connect(ctx); err != nil {
		w.cfg.logger.Warn("convtrace: storage not reachable yet", "err", err)
	}
	cancel()
	var p pending
	var lastSend time.Time
	gap, armed := minGap, false
	timer, retry := time.NewTimer(time.Hour), time.NewTimer(0) // retry first replays the spool
	timer.Stop()
	scheduleRetry := func() {
		if !w.buf.empty() {
			retry.Reset(max(time.Until(w.gate.next), minGap))
		}
	}
	send := func() {
		timer.Stop()
		armed = false
		w.queue.lazy(0, 0)
		rows := p.size()
		w.send(&p)
		lastSend = time.Now()
		gap = max(minGap, time.Duration(min(rows, loadRows))*w.cfg.flushInterval/loadRows)
		scheduleRetry()
		// After large batches, once nothing more waits, the memory they
		// took goes back to the system: an idle process would keep it
		// until the runtime's periodic collection, minutes later.
		if w.sentLarge && w.queue.empty() {
			w.sentLarge = false
			debug.FreeOSMemory()
		}
	}
	// take adds what waits in the queue to the batch, and reports whether
	// the queue is closed.
	take := func() bool {
		items, closed := w.queue.take()
		for _, it := range items {
			w.queued.Add(-it.rows())
			w.queuedBytes.Add(-it.size())
			if it.seg != nil && it.seg.released.Load() {
				w.spooled.Add(it.rows()) // stored by the replay of its segment
				continue
			}
			if it.sdk != nil {
				it = w.mapped(&w.sdk, it)
			}
			if it.flushed != nil {
				send()
				close(it.flushed)
				continue
			}
			w.add(&p, it)
			// An early prompt is written at once: it exists to be seen
			// while its call runs.
			if it.early || p.size() >= w.cfg.batchRows {
				send()
			}
		}
		return closed
	}
	for {
		select {
		case <-w.queue.ready:
			if take() {
				w.finish(&p)
				return
			}
			switch wait := gap - time.Since(lastSend); {
			case p.empty():
			case wait <= 0:
				send()
			default:
				if !armed {
					timer.Reset(wait)
					armed = true
				}
				// Half the queue's bytes are left for what comes while
				// the batch is sent.
				w.queue.lazy(w.cfg.batchRows-p.size(), w.cfg.queueBytes/2)
			}
		case <-timer.C:
			armed = false
			if take() {
				w.finish(&p)
				return
			}
			if !p.empty() { // unless take sent it, full
				send()
			}
		case <-retry.C:
			if w.gate.wait() == nil {
				_ = w.retry()
			}
			scheduleRetry()
		}
	}
}

// finish writes the last batch after Shutdown, making one more attempt
// whatever the back-off, and spools (or loses) what storage did not take.
func (w *writer) finish(p *pending) {
	w.gate.next = time.Time{}
	if p.empty() {
		_ = w.retry()
	} else {
		w.send(p)
	}
	w.spill()
	w.reportLoss(errShutDown)
	if w.conn != nil {
		_ = w.conn.Close()
	}
}

// hasCode reports whether a turn's attributes carry the warning code.
func hasCode(attrs []schema.Attr, code string) bool {
	for _, a := range attrs {
		if a.Key == schema.KeyCode && a.Value == code {
			return true
		}
	}
	return false
}
