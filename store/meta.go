package store

import (
	"context"
	"fmt"
)

// ThreadChange is what a user changes about a thread; a nil field keeps
// its value.
type ThreadChange struct {
	Title    *string // "" resets the title to the automatic one
	Archived *bool
}

// insertThreadMeta writes a thread's new thread_meta row in one statement
// that reads the newest row it replaces: the fields not changed (the title,
// archived and starred) carry over, and updated_ns is past the newest
// row's even when the clock is not, so two quick edits never tie in
// ReplacingMergeTree. A thread without metadata starts from the column
// defaults: an aggregate over no rows yields one row of them.
const insertThreadMeta = `
INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns)
SELECT
    ?,
    if(?, ?, argMax(title, updated_ns)),
    if(?, ?, argMax(archived, updated_ns)),
    argMax(starred, updated_ns),
    greatest(?, max(updated_ns) + 1)
FROM thread_meta
WHERE thread_id = ?`

// ChangeThread applies ch to the thread's metadata, nowNS being the time
// of the change in Unix nanoseconds.
func (s Store) ChangeThread(ctx context.Context, id string, ch ThreadChange, nowNS uint64) error {
	var title string
	if ch.Title != nil {
		title = *ch.Title
	}
	var archived bool
	if ch.Archived != nil {
		archived = *ch.Archived
	}
	err := s.db.Exec(ctx, insertThreadMeta, id,
		boolUInt8(ch.Title != nil), title,
		boolUInt8(ch.Archived != nil), boolUInt8(archived),
		nowNS, id)
	if err != nil {
		return fmt.Errorf("insert thread meta: %w", err)
	}
	return nil
}
