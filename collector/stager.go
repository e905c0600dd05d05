package collector

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
)

// stagingConn is what a stager needs of a ClickHouse connection.
type stagingConn interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	Exec(ctx context.Context, query string, args ...any) error
	Cluster() topology.Cluster
	Close() error
}

// stager completes staged calls. Requests call complete for the calls they
// staged; a loop sweeps for calls whose window ended, or whose completion
// failed, on any instance.
type stager struct {
	w      *writer
	window time.Duration
	grace  time.Duration // the longest a staged row takes to become visible
	turns  func([]mapping.Span) []schema.Turn
	dial   func(ctx context.Context) (stagingConn, error)

	mu   sync.Mutex
	conn stagingConn
	busy map[joinKey]bool // calls being completed in this process

	// Only the sweep loop touches these.
	sweptFrom time.Time // the earliest receive time the next sweep reads
	dropped   time.Time // when old partitions were last dropped
}

func (st *stager) connection(ctx context.Context) (stagingConn, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != nil {
		return st.conn, nil
	}
	conn, err := st.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	st.conn = conn
	return conn, nil
}

func (st *stager) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != nil {
		_ = st.conn.Close()
		st.conn = nil
	}
}

// claim marks the calls of keys that no other goroutine is completing as
// busy until release, and returns them. It never waits, so a request is
// never held up behind a sweep that waits for storage: a call it skips is
// merged by the goroutine that holds it, or by the next sweep.
func (st *stager) claim(keys []joinKey) (claimed []joinKey, release func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.busy == nil {
		st.busy = make(map[joinKey]bool)
	}
	for _, k := range keys {
		if !st.busy[k] {
			st.busy[k] = true
			claimed = append(claimed, k)
		}
	}
	return claimed, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, k := range claimed {
			delete(st.busy, k)
		}
	}
}

// complete writes the turns of the calls of keys that are due, and again
// while records keep arriving for them. It returns how many calls it wrote.
// In this process one goroutine at a time completes a call, so a request
// and a sweep do not write the same call twice; two instances may, which
// storage folds.
func (st *stager) complete(ctx context.Context, keys []joinKey) (int, error) {
	keys, release := st.claim(keys)
	defer release()
	written := 0
	// After a write, a call is written again only when more records
	// arrived than this write merged: another writer's mark may count them
	// while its copy was inserted before this one.
	var mine map[joinKey]uint32
	for len(keys) > 0 {
		// Taken before the read: what the read cannot see yet was stored
		// less than a grace before it started.
		now := time.Now()
		staged, err := st.read(ctx, keys)
		if err != nil {
			return written, err
		}
		units, err := st.units(ctx, staged)
		if err != nil {
			return written, err
		}
		var (
			it   item
			done []schema.Staged
		)
		keys = nil
		wrote := make(map[joinKey]uint32, len(units))
		calls := 0
		for _, u := range units {
			merged := uint32(0)
			for _, c := range u.spans() {
				if n, ok := mine[c.key]; ok {
					c.merged = n
				}
				merged += c.merged
			}
			switch {
			case u.silent && merged < u.records:
			case u.due(merged, now, st.window, st.grace):
				turns := st.turns([]mapping.Span{u.span})
				u.call.sortKeys(turns, now, st.window, st.grace)
				u.keep(turns)
				for i := range turns {
					turns[i].Revision = uint64(now.UnixNano())
				}
				it.turns = append(it.turns, turns...)
				keys = append(keys, u.call.key)
				calls++
			default:
				continue
			}
			for _, c := range u.spans() {
				wrote[c.key] = c.records
			}
			done = append(done, u.marks()...)
		}
		if len(done) == 0 {
			return written, nil
		}
		if err := st.w.writeWait(ctx, it); err != nil {
			return written, fmt.Errorf("write joined turns: %w", err)
		}
		if err := st.w.writeWait(ctx, item{staged: done}); err != nil {
			return written, fmt.Errorf("write join marks: %w", err)
		}
		written += calls
		mine = wrote
	}
	return written, nil
}

// read returns what join_staging holds of the calls of keys.
func (st *stager) read(ctx context.Context, keys []joinKey) ([]*stagedCall, error) {
	conn, err := st.connection(ctx)
	if err != nil {
		return nil, err
	}
	calls := make(map[joinKey]*stagedCall, len(keys))
	seen := make(map[joinKey]map[string]bool, len(keys))
	err = store.EachStaged(ctx, conn, keys, func(r *schema.Staged) error {
		k := joinKey{TraceID: r.TraceID, SpanID: r.SpanID}
		c := calls[k]
		if c == nil {
			c = &stagedCall{key: k}
			calls[k] = c
			seen[k] = make(map[string]bool)
		}
		if r.Kind == schema.StagedWritten {
			c.merged = max(c.merged, r.Merged)
			c.wroteTurns = c.wroteTurns || r.Pos == 0
			if r.Pos == 0 && len(r.Payload) > 0 {
				c.thread = string(r.Payload)
			}
			return nil
		}
		if seen[k][r.RecordID] {
			return nil // a later copy of a record delivered twice
		}
		seen[k][r.RecordID] = true
		if c.records == 0 || r.ReceivedNS < c.firstNS {
			c.firstNS = r.ReceivedNS
		}
		c.records++
		if err := c.add(r.Kind, r.Pos, r.ReceivedNS, r.Payload); err != nil {
			return fmt.Errorf("staged record %s/%s/%s: %w", r.TraceID, r.SpanID, r.RecordID, err)
		}
		return nil
	})
	if err != nil {
		st.close()
		return nil, err
	}
	out := make([]*stagedCall, 0, len(calls))
	for _, k := range keys {
		if c := calls[k]; c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// sweepBytes bounds the records a sweep reads at once, sweepLimit the
// calls it finds due.
const (
	sweepBytes = 32 << 20
	sweepLimit = 10000
)

// sweep completes the calls whose window ended, including those staged by
// another instance, or by this one before a crash, and complete calls a
// request failed to write once they settled: the first sweep reads every
// record kept, later ones what arrived since a little before the previous
// sweep. Once a minute it drops what is past stagingKept.
func (st *stager) sweep(ctx context.Context, settle, margin time.Duration) (int, error) {
	now := time.Now()
	from := st.sweptFrom
	if from.IsZero() {
		from = now.Add(-stagingKept)
	}
	conn, err := st.connection(ctx)
	if err != nil {
		return 0, err
	}
	due, err := store.DueStaged(ctx, conn, from, now.Add(-st.window-st.grace), now.Add(-settle), sweepLimit)
	if err != nil {
		st.close()
		return 0, err
	}
	found := len(due)
	written := 0
	for len(due) > 0 {
		// At most 500 calls and sweepBytes of records a round (but one
		// call whatever its size), so that a sweep of large calls reads
		// them a few at a time.
		n, total := 0, uint64(0)
		keys := make([]joinKey, 0, min(len(due), 500))
		for n < len(due) && n < 500 && (n == 0 || total+due[n].Bytes <= sweepBytes) {
			total += due[n].Bytes
			keys = append(keys, due[n].SpanKey)
			n++
		}
		w, err := st.complete(ctx, keys)
		written += w
		if err != nil {
			return written, err
		}
		due = due[n:]
	}
	if found < sweepLimit {
		st.sweptFrom = now.Add(-st.window - st.grace - margin)
	}
	if now.Sub(st.dropped) >= time.Minute {
		if err := store.DropStagingBefore(ctx, conn, now.Add(-stagingKept)); err != nil {
			return written, err
		}
		st.dropped = now
	}
	return written, nil
}
