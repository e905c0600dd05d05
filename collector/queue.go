package collector

import (
	"errors"
	"sync"
	"sync/atomic"
)

// errShutDown means the writer was shut down: it takes no more rows.
var errShutDown = errors.New("writer shut down")

// queue hands items to the writer goroutine in order. It is bounded by the
// writer's row and byte counts (WithQueueSize, WithQueueBytes), not by a
// number of items: the in-process path hands over one span per item, and
// a burst of short calls must not be shed while a batch is being sent.
type queue struct {
	mu     sync.Mutex
	items  []item
	spare  []item // the slice taken last time, reused
	closed bool
	ready  chan struct{} // holds a token while items wait
	// room and roomBytes are how many more rows, and bytes, the writer
	// takes when its batch's timer fires, unwoken: waking it costs the
	// caller a system call. 0 while no timer runs.
	room, roomBytes atomic.Int64
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// put appends it, unless the queue is closed or admit (called under the
// queue's lock, so that no put passes a close) refuses it.
func (q *queue) put(it item, admit func() error) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return errShutDown
	}
	if err := admit(); err != nil {
		q.mu.Unlock()
		return err
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	rows, bytes := q.room.Add(-it.rows()), q.roomBytes.Add(-it.size())
	if rows <= 0 || bytes <= 0 || it.early || it.flushed != nil {
		q.signal()
	}
	return nil
}

// lazy lets the writer wait for its batch's timer while up to rows and
// bytes more arrive; lazy(0, 0) makes every put wake it, and wakes it for
// what came while it counted on a timer that no longer runs.
func (q *queue) lazy(rows int, bytes int64) {
	q.room.Store(int64(rows))
	q.roomBytes.Store(bytes)
	if rows <= 0 && !q.empty() {
		q.signal()
	}
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns what waits, in order, and whether the queue is closed; the
// slice is valid until the next take.
func (q *queue) take() ([]item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	clear(q.spare)
	q.items, q.spare = q.spare[:0], items
	return items, q.closed
}

// close stops puts; the writer takes what is left and finishes. It reports
// whether it closed the queue (false when it was closed already).
func (q *queue) close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	q.signal()
	return true
}

// empty reports whether nothing waits.
func (q *queue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}
