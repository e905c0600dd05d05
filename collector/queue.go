package collector

import (
	"errors"
	"sync"
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
	q.signal()
	return nil
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
