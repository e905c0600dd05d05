package viewer

import (
	"context"
	"fmt"
)

// contextTurn is a prompt or response turn as the recent context reads it.
type contextTurn struct {
	TurnID, Role, Speaker, Phase, Content string
	Seq                                   uint16
	StartNS                               uint64
}

// contextCursor is the oldest turn read so far: the next batch is older.
type contextCursor struct {
	StartNS uint64
	Seq     uint16
	TurnID  string
}

// selectContextTurns reads a thread's prompts and responses newest first,
// in batches: the recent context stops reading once it has enough messages.
// Error rows and tool turns are not what was said to or by the model, and
// internal turns are kept for the audit trail only. LIMIT 1 BY turn_id
// keeps one copy of a turn delivered twice.
const (
	selectContextTurns = `
SELECT turn_id, role, seq, speaker, phase, content, start_ns
FROM conversations
WHERE thread_id = ?
  AND role IN ('prompt', 'response')
  AND internal = 0`
	contextOlder = `
  AND (start_ns < ? OR (start_ns = ? AND (seq < ? OR (seq = ? AND turn_id < ?))))`
	contextNewestFirst = `
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT ?`
)

// selectThreadExists is 1 when the thread has a turn, else 0.
const selectThreadExists = `
SELECT count() AS found
FROM
(
    SELECT 1
    FROM conversations
    WHERE thread_id = ?
    LIMIT 1
)`

// contextTurns returns at most limit prompt and response turns of a
// thread, newest first, older than before when it is given.
func (s store) contextTurns(ctx context.Context, threadID string, before *contextCursor, limit int) ([]contextTurn, error) {
	query, args := selectContextTurns, []any{threadID}
	if before != nil {
		query += contextOlder
		args = append(args, before.StartNS, before.StartNS, before.Seq, before.Seq, before.TurnID)
	}
	query += contextNewestFirst
	args = append(args, uint64(limit))
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query context turns: %w", err)
	}
	defer rows.Close()
	var turns []contextTurn
	for rows.Next() {
		var t contextTurn
		if err := rows.Scan(&t.TurnID, &t.Role, &t.Seq, &t.Speaker, &t.Phase, &t.Content, &t.StartNS); err != nil {
			return nil, fmt.Errorf("scan context turn: %w", err)
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read context turns: %w", err)
	}
	return turns, nil
}

// threadExists reports whether the thread has any turn.
func (s store) threadExists(ctx context.Context, threadID string) (bool, error) {
	return s.exists(ctx, "thread", selectThreadExists, threadID)
}

// exists runs a query whose one row counts found rows (at most one), for
// what says whether a thread or trace exists.
func (s store) exists(ctx context.Context, what, query string, args ...any) (bool, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("query %s exists: %w", what, err)
	}
	defer rows.Close()
	var found uint64
	if rows.Next() {
		if err := rows.Scan(&found); err != nil {
			return false, fmt.Errorf("scan %s exists: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read %s exists: %w", what, err)
	}
	return found > 0, nil
}
