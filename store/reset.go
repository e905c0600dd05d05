package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// A context reset is a turn of role context_reset in conversations, not a
// row of a table of its own: it goes wherever the thread's turns go
// (export, import, archive, prune, delete, a cluster's shard) and shows
// where it was said on the thread page.

const (
	// selectThreadEnd is how many turns {thread} has and when its newest
	// started.
	selectThreadEnd = `
SELECT count(), max(start_ns)
FROM conversations
WHERE thread_id = {thread}`

	// insertContextReset stores the reset turn {turn} of span {span} in
	// {thread} at {at}, in the project, phase and round of the thread's
	// newest turn, so that it sorts with the thread and shows after what
	// was said last. A thread without turns gets none.
	insertContextReset = `
INSERT INTO conversations (turn_id, span_id, project, thread_id, phase, round, role, status, start_ns)
SELECT {turn}, {span}, argMax(project, start_ns), {thread}, argMax(phase, start_ns), argMax(round, start_ns), {role}, {ok}, {at}
FROM conversations
WHERE thread_id = {thread}
HAVING count() > 0`
)

// ResetContext marks the thread's recent context to start anew now: from
// here RecentContext reads only what is said after the mark, while every
// turn before it stays stored and shown. The mark is past the thread's
// newest turn even when the clock is not. It returns when the mark is, or
// ErrNotFound when the thread has no turn.
func (s Store) ResetContext(ctx context.Context, threadID string, now time.Time) (time.Time, error) {
	var (
		n      uint64
		newest uint64
	)
	if err := queryRow(ctx, s.db, sqlf(selectThreadEnd, holes{"thread": arg(threadID)}), &n, &newest); err != nil {
		return time.Time{}, fmt.Errorf("read the end of thread %s: %w", threadID, err)
	}
	if n == 0 {
		return time.Time{}, ErrNotFound
	}
	at := max(uint64(now.UnixNano()), newest+1)
	span := newSpanID()
	marker := schema.Turn{TurnID: schema.TurnID(span, schema.RoleContextReset, 0), SpanID: span, ThreadID: threadID,
		Role: schema.RoleContextReset, Status: schema.StatusOK, StartNS: at}
	w, err := Begin(ctx, s.db, Change{Days: summarizedDays([][]schema.Turn{{marker}}, now)})
	if err != nil {
		return time.Time{}, err
	}
	if err := resetQuery(marker).exec(ctx, s.db); err != nil {
		return time.Time{}, fmt.Errorf("store the context reset of thread %s: %w", threadID, err)
	}
	if err := w.Done(ctx); err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, int64(at)).UTC(), nil
}

// resetQuery is insertContextReset of the marker turn t.
func resetQuery(t schema.Turn) sqlText {
	return sqlf(insertContextReset, holes{"turn": arg(t.TurnID), "span": arg(t.SpanID), "thread": arg(t.ThreadID),
		"role": arg(t.Role), "ok": arg(t.Status), "at": arg(t.StartNS)})
}

// newSpanID is a random span id, as OpenTelemetry makes them, for a mark
// that no span recorded.
func newSpanID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
