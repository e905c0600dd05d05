package collector

import (
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// A put wakes the writer unless the writer waits for its batch's timer
// with room left; an early prompt, a flush and the room running out, in
// rows or bytes, wake it all the same, and so does lazy(0, 0) when items
// came meanwhile.
func TestQueueWakesWriter(t *testing.T) {
	q := newQueue()
	put := func(it item) func() {
		return func() {
			if err := q.put(it, func() error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	row := item{turns: make([]schema.Turn, 1)} // a row of rowOverhead bytes
	steps := []struct {
		name string
		do   func()
		woke bool
	}{
		{"put, no timer", put(row), true},
		{"lazy", func() { q.lazy(2, 1<<20) }, false},
		{"put with room", put(row), false},
		{"put of an early prompt", put(item{turns: make([]schema.Turn, 1), early: true}), true},
		{"lazy again", func() { q.lazy(2, 1<<20) }, false},
		{"put with room", put(row), false},
		{"put filling the rows' room", put(row), true},
		{"lazy with little byte room", func() { q.lazy(100, rowOverhead+1) }, false},
		{"put with room", put(row), false},
		{"put filling the bytes' room", put(row), true},
		{"lazy", func() { q.lazy(100, 1<<20) }, false},
		{"put of a flush", put(item{flushed: make(chan struct{})}), true},
		{"lazy", func() { q.lazy(100, 1<<20) }, false},
		{"put with room", put(row), false},
		{"timer stopped, items waiting", func() { q.lazy(0, 0) }, true},
		{"taken", func() { q.take() }, false},
		{"timer stopped, nothing waiting", func() { q.lazy(0, 0) }, false},
	}
	for _, s := range steps {
		s.do()
		woke := false
		select {
		case <-q.ready:
			woke = true
		default:
		}
		if woke != s.woke {
			t.Errorf("%s: writer woken %v, want %v", s.name, woke, s.woke)
		}
	}
}
