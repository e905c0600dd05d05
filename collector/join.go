package collector

import (
	"sort"
	"sync"
	"time"
)

// joiner pairs OTLP spans with the log records that carry their content.
// Both halves arrive in any order, in different requests, seconds apart: a
// GenAI span without content of its own waits for its log records, and log
// records wait for their span, at most the join window; then they are
// written with whatever is known. It holds at most capacity entries; past
// that the oldest are released at once.
type joiner struct {
	window   time.Duration
	capacity int

	mu    sync.Mutex
	spans map[joinKey]*heldSpan
	logs  map[joinKey]*heldLogs
}

type joinKey struct{ traceID, spanID string }

type heldSpan struct {
	s     span
	since time.Time
}

type heldLogs struct {
	logs  []logRecord
	since time.Time
}

func newJoiner(window time.Duration, capacity int) *joiner {
	return &joiner{
		window:   window,
		capacity: capacity,
		spans:    make(map[joinKey]*heldSpan),
		logs:     make(map[joinKey]*heldLogs),
	}
}

// addSpans returns the spans to map now: those that need no log records,
// and those whose log records were waiting. The others wait.
func (j *joiner) addSpans(now time.Time, spans []span) []span {
	j.mu.Lock()
	defer j.mu.Unlock()
	var ready []span
	for _, s := range spans {
		k := joinKey{s.traceID, s.spanID}
		if hl, ok := j.logs[k]; ok {
			delete(j.logs, k)
			s.attachLogs(hl.logs)
			ready = append(ready, s)
			continue
		}
		if !needsLogs(s) {
			ready = append(ready, s)
			continue
		}
		j.spans[k] = &heldSpan{s: s, since: now}
	}
	return append(ready, j.overflow()...)
}

// addLogs returns the spans these log records complete. Log records whose
// span has not arrived wait. Every record must carry a trace and span id.
func (j *joiner) addLogs(now time.Time, logs []logRecord) []span {
	groups := make(map[joinKey][]logRecord)
	var order []joinKey
	for _, l := range logs {
		k := joinKey{l.traceID, l.spanID}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], l)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var ready []span
	for _, k := range order {
		group := groups[k]
		switch hs, hl := j.spans[k], j.logs[k]; {
		case hs != nil:
			delete(j.spans, k)
			hs.s.attachLogs(group)
			ready = append(ready, hs.s)
		case hl != nil:
			hl.logs = append(hl.logs, group...)
		default:
			j.logs[k] = &heldLogs{logs: group, since: now}
		}
	}
	return append(ready, j.overflow()...)
}

// expire releases what has waited longer than the window: a span without
// its content, or log records as a span of their own.
func (j *joiner) expire(now time.Time) []span {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.release(func(since time.Time) bool { return now.Sub(since) >= j.window })
}

// drain releases everything, for shutdown.
func (j *joiner) drain() []span {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.release(func(time.Time) bool { return true })
}

// held reports how many spans and log groups wait.
func (j *joiner) held() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.spans) + len(j.logs)
}

// overflow releases the oldest entries when more than capacity wait,
// leaving room for a tenth of it so that it does not run on every add.
func (j *joiner) overflow() []span {
	n := len(j.spans) + len(j.logs)
	if n <= j.capacity {
		return nil
	}
	times := make([]time.Time, 0, n)
	for _, h := range j.spans {
		times = append(times, h.since)
	}
	for _, h := range j.logs {
		times = append(times, h.since)
	}
	sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
	cutoff := times[n-j.capacity*9/10-1]
	return j.release(func(since time.Time) bool { return !since.After(cutoff) })
}

func (j *joiner) release(due func(since time.Time) bool) []span {
	var out []span
	for k, h := range j.spans {
		if due(h.since) {
			delete(j.spans, k)
			out = append(out, h.s)
		}
	}
	for k, h := range j.logs {
		if due(h.since) {
			delete(j.logs, k)
			out = append(out, spanFromLogs(h.logs))
		}
	}
	return out
}
