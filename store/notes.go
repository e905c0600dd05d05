package store

import (
	"context"
	"fmt"
	"time"
)

// Note is a user's star and memo on one turn.
type Note struct {
	ThreadID  string `json:"thread_id"`
	TurnID    string `json:"turn_id"`
	Starred   bool   `json:"starred"`
	Memo      string `json:"memo"`
	UpdatedNS uint64 `json:"updated_ns"`
}

// MaxMemoRunes is the longest memo a turn takes, in characters.
const MaxMemoRunes = 8000

// selectNotes reads the newest note of each turn of a thread: argMax by
// updated_ns, so the answer never waits for ReplacingMergeTree to merge.
const selectNotes = `
SELECT turn_id, argMax(starred, updated_ns) AS note_starred, argMax(memo, updated_ns) AS note_memo,
       max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id = ?
GROUP BY turn_id
ORDER BY turn_id`

// selectNote is selectNotes for one turn.
const selectNote = `
SELECT turn_id, argMax(starred, updated_ns) AS note_starred, argMax(memo, updated_ns) AS note_memo,
       max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id = ? AND turn_id = ?
GROUP BY turn_id`

// insertNote writes the new note of {turn} of {thread} in one INSERT … SELECT
// over the newest row it replaces: the field not changed carries over and
// updated_ns passes the newest row's (docs/design/queries.md).
const insertNote = `
INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns)
SELECT
    {thread},
    {turn},
    if({set_starred}, {starred}, argMax(starred, updated_ns)),
    if({set_memo}, {memo}, argMax(memo, updated_ns)),
    greatest({now}, max(updated_ns) + 1)
FROM turn_notes
WHERE thread_id = {thread} AND turn_id = {turn}`

// selectTurnExists counts the rows of one turn.
const selectTurnExists = `
SELECT count() AS copies
FROM conversations
WHERE thread_id = ? AND turn_id = ?`

// Notes returns the Notes of a thread's turns by turn id.
func (s Store) Notes(ctx context.Context, threadID string) (map[string]Note, error) {
	return s.readNotes(ctx, threadID, selectNotes, threadID)
}

// readNotes runs a query of the notes of threadID.
func (s Store) readNotes(ctx context.Context, threadID, query string, args ...any) (map[string]Note, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query notes: %w", err)
	}
	defer rows.Close()
	notes := map[string]Note{}
	for rows.Next() {
		var (
			n       Note
			starred uint8
		)
		if err := rows.Scan(&n.TurnID, &starred, &n.Memo, &n.UpdatedNS); err != nil {
			return nil, fmt.Errorf("scan note: %w", err)
		}
		n.ThreadID, n.Starred = threadID, starred != 0
		notes[n.TurnID] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read notes: %w", err)
	}
	return notes, nil
}

// NoteChange is a change to a turn's note; a nil field keeps its value.
type NoteChange struct {
	Starred *bool   `json:"starred"`
	Memo    *string `json:"memo"`
}

// insert is insertNote of ch to a turn at nowNS.
func (ch NoteChange) insert(threadID, turnID string, nowNS uint64) sqlText {
	var starred bool
	if ch.Starred != nil {
		starred = *ch.Starred
	}
	var memo string
	if ch.Memo != nil {
		memo = *ch.Memo
	}
	return sqlf(insertNote, holes{"thread": arg(threadID), "turn": arg(turnID), "set_starred": arg(boolUInt8(ch.Starred != nil)),
		"starred": arg(boolUInt8(starred)), "set_memo": arg(boolUInt8(ch.Memo != nil)), "memo": arg(memo), "now": arg(nowNS)})
}

// putNote applies ch to a turn's note and returns the note as stored;
// errTurnNotFound when the thread has no such turn.
func (s Store) PutNote(ctx context.Context, threadID, turnID string, ch NoteChange) (Note, error) {
	rows, err := s.db.Query(ctx, selectTurnExists, threadID, turnID)
	if err != nil {
		return Note{}, fmt.Errorf("query turn: %w", err)
	}
	var copies uint64
	if rows.Next() {
		err = rows.Scan(&copies)
	}
	if err == nil {
		err = rows.Err()
	}
	rows.Close()
	if err != nil {
		return Note{}, fmt.Errorf("read turn: %w", err)
	}
	if copies == 0 {
		return Note{}, ErrTurnNotFound
	}

	if err := ch.insert(threadID, turnID, uint64(time.Now().UnixNano())).exec(ctx, s.db); err != nil {
		return Note{}, fmt.Errorf("insert note: %w", err)
	}
	notes, err := s.readNotes(ctx, threadID, selectNote, threadID, turnID)
	if err != nil {
		return Note{}, err
	}
	return notes[turnID], nil
}
