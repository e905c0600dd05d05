package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
)

// BatchConn is what the writer needs of a ClickHouse connection: a
// clickhouse-go driver.Conn satisfies it.
type BatchConn interface {
	store.BatchDB
	Close() error
}

// dialer connects to storage and makes the schema current. The writer calls
// it lazily and again after a failure, so a pipeline can start while
// ClickHouse is down.
type dialer func(ctx context.Context) (BatchConn, error)

// dialDSN returns a dialer that opens dsn's database (creating it) and
// migrates it, on every server of the cluster the DSN names, if any.
func dialDSN(dsn string) dialer {
	return func(ctx context.Context) (BatchConn, error) {
		conn, err := ddl.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		if _, err := ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster())); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// result is what became of a batch's inserts: each table's error, nil when
// its rows were stored or it had none.
type result struct{ staged, turns, spans error }

// failing is the result of a batch none of whose inserts was tried.
func failing(err error) result { return result{staged: err, turns: err, spans: err} }

// of is the result an item is told: only the errors of inserts holding its
// rows.
func (r result) of(a ack) error {
	var errs []error
	if a.staged {
		errs = append(errs, r.staged)
	}
	if a.turns {
		errs = append(errs, r.turns)
	}
	if a.spans {
		errs = append(errs, r.spans)
	}
	return errors.Join(errs...)
}

// store writes the rows of sets, one insert per table, unless the back-off
// after a failure still runs.
func (w *writer) store(sets ...rows) result {
	var turns [][]schema.Turn
	var spans [][]schema.Span
	var staged [][]schema.Staged
	var nt, ns, nst int
	for _, s := range sets {
		turns, spans, staged = append(turns, s.Turns), append(spans, s.Spans), append(staged, s.Staged)
		nt, ns, nst = nt+len(s.Turns), ns+len(s.Spans), nst+len(s.Staged)
	}
	if nt+ns+nst == 0 {
		return result{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.writeTimeout)
	defer cancel()
	if err := w.gate.wait(); err != nil {
		return failing(err)
	}
	if err := w.connect(ctx); err != nil {
		w.failed(err)
		return failing(err)
	}
	var res result
	// Staged halves go first: a request that stages them is acknowledged
	// only once they are durable. Their receive time is when they are
	// stored, so that a row becomes visible at most a write timeout after
	// it (staging.go).
	now := uint64(time.Now().UnixNano())
	for _, set := range staged {
		for i := range set {
			set[i].ReceivedNS = now
		}
	}
	res.staged = w.insert("join_staging", nst, func() error {
		return store.InsertStaged(ctx, w.conn, staged...)
	})
	res.turns = w.storeTurns(ctx, turns, nt)
	res.spans = w.insert("spans", ns, func() error {
		return store.InsertSpans(ctx, w.conn, spans...)
	})
	err := errors.Join(res.staged, res.turns, res.spans)
	if err != nil {
		w.failed(err)
	} else {
		w.gate.reset()
		w.connected.Store(true)
	}
	// A connection that failed otherwise than by the server refusing the
	// rows is redialled: the pool may hold sockets of a dead server. One
	// that sent a large batch is too: the driver keeps a connection's
	// buffers as large as the largest block it sent.
	large := largeBatch(sets)
	w.sentLarge = w.sentLarge || large
	if w.conn != nil && (err != nil && !refusedByServer(err) || large) {
		_ = w.conn.Close()
		w.conn = nil
	}
	return res
}

// storeTurns stores n turns in order, counting them written.
func (w *writer) storeTurns(ctx context.Context, turns [][]schema.Turn, n int) error {
	if n == 0 {
		return nil
	}
	return store.WriteTurns(ctx, w.conn, &w.history, turns, func(do func() error) error {
		return w.insert("conversations", n, do)
	})
}

// largeBatchBytes is the batch size past which the writer lets the
// connection that sent it go, with its buffers.
const largeBatchBytes = 16 << 20

func largeBatch(sets []rows) bool {
	var n int64
	for _, s := range sets {
		n += sizeOf(s.Turns, s.Spans)
	}
	return n > largeBatchBytes
}

// failed records a storage failure: the back-off, the error Stats shows,
// and one warning when storage stops answering rather than one per batch.
func (w *writer) failed(err error) {
	w.gate.fail(err)
	msg := err.Error()
	w.lastErr.Store(&msg)
	if w.connected.Swap(false) {
		w.cfg.logger.Warn("convtrace: storage failing; rows are kept or refused until it answers", "err", err)
	}
}

// refusedByServer reports whether ClickHouse answered and refused, as
// opposed to a connection or timeout error.
func refusedByServer(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex)
}

// connect dials storage unless connected.
func (w *writer) connect(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	conn, err := w.dial(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	w.conn = conn
	w.connected.Store(true)
	return nil
}

// backoff spaces attempts to reach storage after a failure (doubling from
// 100 ms up to 5 s) instead of trying for every batch of a busy pipeline.
type backoff struct {
	delay time.Duration
	next  time.Time
	err   error
}

func (b *backoff) wait() error {
	if time.Now().Before(b.next) {
		return fmt.Errorf("%w (next attempt in %s)", b.err, time.Until(b.next).Round(time.Millisecond))
	}
	return nil
}

func (b *backoff) fail(err error) {
	b.delay = min(max(2*b.delay, 100*time.Millisecond), 5*time.Second)
	b.next, b.err = time.Now().Add(b.delay), err
}

func (b *backoff) reset() { b.delay, b.next = 0, time.Time{} }

// insert runs one insert of n rows into table, counting them written and
// reporting its duration to the insert-latency observer when there is one.
func (w *writer) insert(table string, n int, do func() error) error {
	if n == 0 {
		return nil
	}
	start := time.Now()
	err := do()
	if w.cfg.observeInsert != nil {
		w.cfg.observeInsert(time.Since(start))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", table, err)
	}
	w.written.Add(int64(n))
	return nil
}
