package collector

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
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
	// cluster and database name where join_staging's parts are: on a
	// cluster (ddl.WithCluster), on every shard.
	cluster, database string

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

const selectStaged = `
SELECT trace_id, span_id, record_id, kind, pos, received_ns, merged, payload
FROM join_staging
WHERE (trace_id, span_id) IN (?)
ORDER BY received_ns, record_id`

// read returns what join_staging holds of the calls of keys.
func (st *stager) read(ctx context.Context, keys []joinKey) ([]*stagedCall, error) {
	conn, err := st.connection(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, selectStaged, keySet(keys))
	if err != nil {
		st.close()
		return nil, fmt.Errorf("read join_staging: %w", err)
	}
	defer rows.Close()
	calls := make(map[joinKey]*stagedCall, len(keys))
	seen := make(map[joinKey]map[string]bool, len(keys))
	for rows.Next() {
		var r schema.Staged
		var payload string
		if err := rows.Scan(&r.TraceID, &r.SpanID, &r.RecordID, &r.Kind, &r.Pos, &r.ReceivedNS, &r.Merged, &payload); err != nil {
			return nil, fmt.Errorf("read join_staging: %w", err)
		}
		k := joinKey{r.TraceID, r.SpanID}
		c := calls[k]
		if c == nil {
			c = &stagedCall{key: k}
			calls[k] = c
			seen[k] = make(map[string]bool)
		}
		if r.Kind == schema.StagedWritten {
			c.merged = max(c.merged, r.Merged)
			c.wroteTurns = c.wroteTurns || r.Pos == 0
			if r.Pos == 0 && payload != "" {
				c.thread = payload
			}
			continue
		}
		if seen[k][r.RecordID] {
			continue // a later copy of a record delivered twice
		}
		seen[k][r.RecordID] = true
		if c.records == 0 || r.ReceivedNS < c.firstNS {
			c.firstNS = r.ReceivedNS
		}
		c.records++
		if err := c.add(r.Kind, r.Pos, r.ReceivedNS, []byte(payload)); err != nil {
			return nil, fmt.Errorf("staged record %s/%s/%s: %w", r.TraceID, r.SpanID, r.RecordID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read join_staging: %w", err)
	}
	out := make([]*stagedCall, 0, len(calls))
	for _, k := range keys {
		if c := calls[k]; c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// sweepBytes bounds the records a sweep reads at once.
const sweepBytes = 32 << 20

// selectDue finds the calls with records not yet merged into written
// turns whose first record was stored before the window cutoff, and the
// calls with a span, no record stored after the settle cutoff: their
// request may have failed to write what was complete (storage went away
// after the records were stored), or skipped a call another goroutine
// held. A call whose span waits for more is read again each sweep until
// its window ends.
const selectDue = `
SELECT trace_id, span_id, sumIf(length(payload), kind != 2)
FROM join_staging
WHERE ts >= ?
GROUP BY trace_id, span_id
HAVING uniqExactIf(record_id, kind != 2) > maxIf(merged, kind = 2)
   AND (minIf(received_ns, kind != 2) <= ?
        OR (countIf(kind = 0) > 0 AND maxIf(received_ns, kind != 2) <= ?))
LIMIT 10000`

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
	rows, err := conn.Query(ctx, selectDue, from.Truncate(time.Second),
		uint64(now.Add(-st.window-st.grace).UnixNano()), uint64(now.Add(-settle).UnixNano()))
	if err != nil {
		st.close()
		return 0, fmt.Errorf("find due calls: %w", err)
	}
	var (
		keys  []joinKey
		sizes []uint64
	)
	for rows.Next() {
		var k joinKey
		var size uint64
		if err := rows.Scan(&k.traceID, &k.spanID, &size); err != nil {
			rows.Close()
			return 0, fmt.Errorf("find due calls: %w", err)
		}
		keys, sizes = append(keys, k), append(sizes, size)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("find due calls: %w", err)
	}
	found := len(keys)
	written := 0
	for len(keys) > 0 {
		// At most 500 calls and sweepBytes of records a round (but one
		// call whatever its size), so that a sweep of large calls reads
		// them a few at a time.
		n, total := 0, uint64(0)
		for n < len(keys) && n < 500 && (n == 0 || total+sizes[n] <= sweepBytes) {
			total += sizes[n]
			n++
		}
		w, err := st.complete(ctx, keys[:n])
		written += w
		if err != nil {
			return written, err
		}
		keys, sizes = keys[n:], sizes[n:]
	}
	if found < 10000 {
		st.sweptFrom = now.Add(-st.window - st.grace - margin)
	}
	if now.Sub(st.dropped) >= time.Minute {
		if err := st.dropOld(ctx, conn, now); err != nil {
			return written, err
		}
		st.dropped = now
	}
	return written, nil
}

// dropOld drops the hourly partitions of join_staging past stagingKept.
// On a cluster, those of every shard.
func (st *stager) dropOld(ctx context.Context, conn stagingConn, now time.Time) error {
	rows, err := conn.Query(ctx, "SELECT DISTINCT partition FROM "+ddl.ActiveParts("join_staging", st.cluster, st.database))
	if err != nil {
		return fmt.Errorf("list join_staging partitions: %w", err)
	}
	var old []string
	oldest := now.Add(-stagingKept).Unix() / 3600
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return fmt.Errorf("list join_staging partitions: %w", err)
		}
		if hour, err := strconv.ParseInt(p, 10, 64); err == nil && hour < oldest {
			old = append(old, strconv.FormatInt(hour, 10))
		}
	}
	rows.Close()
	for _, p := range old {
		if err := ddl.DropPartition(ctx, conn, "join_staging", p); err != nil {
			return fmt.Errorf("drop join_staging partition %s: %w", p, err)
		}
	}
	return nil
}
