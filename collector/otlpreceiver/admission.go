package otlpreceiver

import (
	"crypto/subtle"
	"errors"
	"io"
	"strings"

	"golang.org/x/sync/semaphore"
)

// memoryPerByte is how many bytes of memory a request holds per byte of
// its decoded body while it is received and stored: the body, the decoded
// message, the rows mapped from it and their batch.
const memoryPerByte = 4

// errOverloaded means the memory limit has no room for a request; the
// sender is asked to retry later.
var errOverloaded = errors.New("receiver at its memory limit, retry later")

// admission bounds the memory of the requests in flight, refusing at once
// rather than queueing: a sender told to retry holds its data itself.
type admission struct {
	sem   *semaphore.Weighted
	limit int64
}

func newAdmission(limit int64) *admission {
	return &admission{sem: semaphore.NewWeighted(limit), limit: limit}
}

// admitted is one request's share of the limit.
type admitted struct {
	a    *admission
	held int64
}

// admit reserves memory for a request of n decoded bytes so far; nil when
// there is no room.
func (a *admission) admit(n int64) *admitted {
	t := &admitted{a: a}
	if !t.grow(n) {
		return nil
	}
	return t
}

// grow extends the reservation to n decoded bytes. A request larger than
// the whole limit may take all of it, so that it still goes through alone.
func (t *admitted) grow(n int64) bool {
	want := min(n*memoryPerByte, t.a.limit)
	if want <= t.held {
		return true
	}
	if !t.a.sem.TryAcquire(want - t.held) {
		return false
	}
	t.held = want
	return true
}

func (t *admitted) release() {
	t.a.sem.Release(t.held)
	t.held = 0
}

// meteredReader grows a reservation as the decoded body is read.
type meteredReader struct {
	r    io.Reader
	t    *admitted
	read int64
}

func (m *meteredReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.read += int64(n)
	if !m.t.grow(m.read) {
		return n, errOverloaded
	}
	return n, err
}

// authorized reports whether an Authorization value carries one of tokens;
// with no tokens every request is. Each comparison takes constant time.
func authorized(tokens []string, header string) bool {
	if len(tokens) == 0 {
		return true
	}
	given, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	match := 0
	for _, t := range tokens {
		match |= subtle.ConstantTimeCompare([]byte(given), []byte(t))
	}
	return match == 1
}
