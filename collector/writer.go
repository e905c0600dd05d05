package collector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/schema"
)

// BatchConn is what the writer needs of a ClickHouse connection.
type BatchConn interface {
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
	Close() error
}

// dialer connects to storage and makes the schema current. The writer calls
// it lazily and again after a failure, so a pipeline can start while
// ClickHouse is down.
type dialer func(ctx context.Context) (BatchConn, error)

// dialDSN returns a dialer that opens dsn's database (creating it) and
// migrates it.
func dialDSN(dsn string) dialer {
	return func(ctx context.Context) (BatchConn, error) {
		conn, err := schema.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		if _, err := schema.Migrate(ctx, conn); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

var (
	insertTurns  = "INSERT INTO conversations (" + strings.Join(schema.TurnColumns, ", ") + ")"
	insertSpans  = "INSERT INTO spans (" + strings.Join(schema.SpanColumns, ", ") + ")"
	insertStaged = "INSERT INTO join_staging (" + strings.Join(schema.StagedColumns, ", ") + ")"
)

// Stats counts what a writer did with the rows handed to it.
type Stats struct {
	Queued  int64 // rows waiting in the queue now
	Dropped int64 // rows refused because the queue was full or the writer stopped
	Written int64 // rows stored
	Failed  int64 // rows lost to storage errors

	// ValuesSanitised counts costs and token counts stored as unknown
	// because they were negative, NaN, infinite or too large.
	ValuesSanitised int64
}

// item is one hand-over to the writer: the rows of some spans, or a flush
// request (flushed is closed once everything before it is written).
type item struct {
	turns   []schema.Turn
	spans   []schema.Span
	staged  []schema.Staged // halves of OTLP calls waiting to be joined
	early   bool            // prompt rows of calls still running
	stored  chan error      // when set, told whether the rows were stored
	flushed chan struct{}

	sanitised int64 // invalid usage values in the spans, stored as unknown
}

// addSpan appends the spans row of s.
func (it *item) addSpan(s span) {
	row, sanitised := mapSpan(s)
	it.spans = append(it.spans, row)
	it.sanitised += int64(sanitised)
}

// errQueueFull means the writer's queue has no room for a request's rows.
var errQueueFull = errors.New("write queue full")

// writer batches rows in one goroutine and writes them with clickhouse-go
// batches: it holds a batch open only while sending it, never across the
// batching window.
type writer struct {
	cfg  config
	dial dialer
	conn BatchConn

	queue    chan item
	queued   atomic.Int64
	dropped  atomic.Int64
	written  atomic.Int64
	failed   atomic.Int64
	mu       sync.RWMutex // guards closed against sends on a closing queue
	closed   bool
	finished chan struct{}

	sanitised atomic.Int64 // see Stats.ValuesSanitised

	// Prompt rows already stored while their call ran, so the same turn is
	// not stored again when the call ends.
	early map[string]bool

	connected atomic.Bool // whether the last connect or write reached storage

	// Connect back-off, used only by the writer goroutine.
	backoff  time.Duration
	redialAt time.Time
	dialErr  error
}

func newWriter(d dialer, cfg config) *writer {
	w := &writer{
		cfg:      cfg,
		dial:     d,
		queue:    make(chan item, 1024),
		finished: make(chan struct{}),
		early:    make(map[string]bool),
	}
	go w.run()
	return w
}

// write hands rows to the writer without waiting. It returns false, and
// counts the rows dropped, when the queue is full or the writer stopped.
//
// Turns are priced here, on the caller's goroutine, so that every path to
// storage (exporter, ingester, pending prompts) stores the priced cost of
// a known model; schema's Turn.Values gives the others their source.
func (w *writer) write(it item) bool {
	w.sanitised.Add(it.sanitised)
	for i := range it.turns {
		w.cfg.prices.price(&it.turns[i])
	}
	n := int64(it.rows())
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed || w.queued.Load()+n > int64(w.cfg.queueRows) {
		w.dropped.Add(n)
		return false
	}
	select {
	case w.queue <- it:
		w.queued.Add(n)
		return true
	default:
		w.dropped.Add(n)
		return false
	}
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

// flush waits until every row handed over before it has been written (or
// failed), or ctx ends.
func (w *writer) flush(ctx context.Context) error {
	done := make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil
	}
	select {
	case w.queue <- item{flushed: done}:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown stops taking rows, writes what is queued and waits for the
// writer to finish, or for ctx to end. It is safe to call more than once.
func (w *writer) shutdown(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	select {
	case <-w.finished:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutdown writer: %w", ctx.Err())
	}
}

func (w *writer) stats() Stats {
	return Stats{Queued: w.queued.Load(), Dropped: w.dropped.Load(), Written: w.written.Load(), Failed: w.failed.Load(),
		ValuesSanitised: w.sanitised.Load()}
}

// pending is the batch being gathered.
type pending struct {
	turns  []schema.Turn
	spans  []schema.Span
	staged []schema.Staged
	early  []string // ids of the early prompt rows in turns
	ids    map[string]bool
	acks   []chan error // of the items in the batch that wait for storage
}

// reset empties the batch, keeping its memory for the next one.
func (p *pending) reset() {
	clear(p.turns)
	clear(p.spans)
	clear(p.staged)
	p.turns, p.spans, p.staged, p.early = p.turns[:0], p.spans[:0], p.staged[:0], p.early[:0]
	clear(p.ids)
	clear(p.acks)
	p.acks = p.acks[:0]
}

// Group commit bounds: see run.
const (
	minGap   = 20 * time.Millisecond
	loadRows = 5000
)

// run gathers rows into batches (group commit): a batch is sent when it is
// full, or once a gap has passed since the last send. The gap grows with
// the size of the last batch, from minGap after a small one to the flush
// interval after one of loadRows or more: a lone sender waits milliseconds
// for its rows to be stored, while under load each table gets about one
// insert of thousands of rows per interval.
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
	gap := minGap
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	send := func() {
		timer.Stop()
		rows := p.rows()
		w.send(&p)
		lastSend = time.Now()
		gap = max(minGap, time.Duration(min(rows, loadRows))*w.cfg.flushInterval/loadRows)
	}
	for {
		select {
		case it, ok := <-w.queue:
			if !ok {
				send()
				if w.conn != nil {
					_ = w.conn.Close()
				}
				return
			}
			w.queued.Add(-int64(it.rows()))
			if it.flushed != nil {
				send()
				close(it.flushed)
				continue
			}
			wasEmpty := p.empty()
			w.add(&p, it)
			wait := gap - time.Since(lastSend)
			// An early prompt is written at once: it exists to be seen while
			// its call runs.
			switch {
			case it.early || wait <= 0 || p.rows() >= w.cfg.batchRows:
				send()
			case wasEmpty:
				timer.Reset(wait)
			}
		case <-timer.C:
			send()
		}
	}
}

func (p *pending) rows() int { return len(p.turns) + len(p.spans) + len(p.staged) }

func (p *pending) empty() bool { return p.rows()+len(p.acks) == 0 }

func (it item) rows() int { return len(it.turns) + len(it.spans) + len(it.staged) }

// add puts an item's rows into the batch, leaving out a prompt row stored
// (or about to be stored) early while its call ran.
func (w *writer) add(p *pending, it item) {
	if p.ids == nil {
		p.ids = make(map[string]bool)
	}
	for _, t := range it.turns {
		switch {
		case it.early:
			p.early = append(p.early, t.TurnID)
			p.ids[t.TurnID] = true
		case w.early[t.TurnID]:
			delete(w.early, t.TurnID)
			continue
		case p.ids[t.TurnID]:
			continue
		}
		p.turns = append(p.turns, t)
	}
	p.spans = append(p.spans, it.spans...)
	p.staged = append(p.staged, it.staged...)
	if it.stored != nil {
		p.acks = append(p.acks, it.stored)
	}
}

// send writes the batch and starts a new one. Errors are logged, counted
// and told to the items waiting for storage: nothing is returned to the
// pipeline.
func (w *writer) send(p *pending) {
	defer p.reset()
	if p.empty() {
		return
	}
	err := w.store(p)
	for _, ack := range p.acks {
		ack <- err
	}
}

func (w *writer) store(p *pending) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.writeTimeout)
	defer cancel()
	if err := w.connect(ctx); err != nil {
		w.lost(p.rows(), err)
		return err
	}
	// Staged halves go first: a request that stages them is acknowledged
	// only once they are durable. Their receive time is when they are
	// stored, so that a row becomes visible at most a write timeout after
	// it (see staging.go).
	for i := range p.staged {
		p.staged[i].ReceivedNS = uint64(time.Now().UnixNano())
	}
	stagedErr := w.timed(len(p.staged), func() error {
		return insertRows(ctx, w.conn, insertStaged, p.staged, (*schema.Staged).Values)
	})
	if stagedErr != nil {
		stagedErr = fmt.Errorf("write join_staging: %w", stagedErr)
		w.lost(len(p.staged), stagedErr)
	} else {
		w.written.Add(int64(len(p.staged)))
	}
	turnsErr := w.timed(len(p.turns), func() error {
		return insertRows(ctx, w.conn, insertTurns, p.turns, (*schema.Turn).Values)
	})
	if turnsErr != nil {
		turnsErr = fmt.Errorf("write conversations: %w", turnsErr)
		w.lost(len(p.turns), turnsErr)
	} else {
		w.written.Add(int64(len(p.turns)))
		for _, id := range p.early {
			w.early[id] = true
		}
	}
	spansErr := w.timed(len(p.spans), func() error {
		return insertRows(ctx, w.conn, insertSpans, p.spans, (*schema.Span).Values)
	})
	if spansErr != nil {
		spansErr = fmt.Errorf("write spans: %w", spansErr)
		w.lost(len(p.spans), spansErr)
	} else {
		w.written.Add(int64(len(p.spans)))
	}
	err := errors.Join(stagedErr, turnsErr, spansErr)
	w.connected.Store(err == nil)
	return err
}

// connect dials storage unless connected. After a failed attempt it waits
// before the next (doubling up to 5 s) instead of redialling for every
// batch of a busy pipeline.
func (w *writer) connect(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	if time.Now().Before(w.redialAt) {
		return fmt.Errorf("connect: %w (next attempt in %s)", w.dialErr, time.Until(w.redialAt).Round(time.Millisecond))
	}
	conn, err := w.dial(ctx)
	if err != nil {
		w.backoff = min(max(2*w.backoff, 100*time.Millisecond), 5*time.Second)
		w.redialAt, w.dialErr = time.Now().Add(w.backoff), err
		return fmt.Errorf("connect: %w", err)
	}
	w.conn, w.backoff = conn, 0
	w.connected.Store(true)
	return nil
}

// timed runs one insert of n rows, reporting its duration to the
// insert-latency observer when there is one.
func (w *writer) timed(n int, insert func() error) error {
	if n == 0 {
		return nil
	}
	start := time.Now()
	err := insert()
	if w.cfg.observeInsert != nil {
		w.cfg.observeInsert(time.Since(start))
	}
	return err
}

// insertRows sends rows as one batch: prepare, append, send, each error
// wrapped with its step.
func insertRows[R any](ctx context.Context, conn BatchConn, query string, rows []R, values func(*R) []any) error {
	if len(rows) == 0 {
		return nil
	}
	batch, err := conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare batch: %w", err)
	}
	defer batch.Close()
	for i := range rows {
		if err := batch.Append(values(&rows[i])...); err != nil {
			return fmt.Errorf("append to batch: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("send batch: %w", err)
	}
	return nil
}

func (w *writer) lost(rows int, err error) {
	w.failed.Add(int64(rows))
	w.cfg.logger.Error("convtrace: rows not stored", "rows", rows, "err", err)
}
