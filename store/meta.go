package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/convtrace/convtrace/store/page"
)

// MaxTitleRunes is how long a title a user or an agent gives may be.
const MaxTitleRunes = 200

// NormalTitle is title as a thread keeps it: on one line, its runs of
// blank space one space, trimmed; a title over MaxTitleRunes is a
// *page.ParamError naming param.
func NormalTitle(param, title string) (string, error) {
	t := strings.Join(strings.Fields(title), " ")
	if n := utf8.RuneCountInString(t); n > MaxTitleRunes {
		return "", page.BadParam(param, "%d characters, at most %d", n, MaxTitleRunes)
	}
	return t, nil
}

// ThreadChange is what a user changes about a thread; a nil field keeps
// its value.
type ThreadChange struct {
	Title    *string // "" resets the title to the automatic one
	Archived *bool
}

// insertThreadMeta writes the new thread_meta row of {thread} in one statement
// that reads the newest row it replaces: the fields not changed (the title,
// archived and starred) carry over, and updated_ns is past the newest
// row's even when the clock is not, so two quick edits never tie in
// ReplacingMergeTree. A thread without metadata starts from the column
// defaults: an aggregate over no rows yields one row of them.
const insertThreadMeta = `
INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns)
SELECT
    {thread},
    if({set_title}, {title}, argMax(title, updated_ns)),
    if({set_archived}, {archived}, argMax(archived, updated_ns)),
    argMax(starred, updated_ns),
    greatest({now}, max(updated_ns) + 1)
FROM thread_meta
WHERE thread_id = {thread}`

// insert is insertThreadMeta of ch to thread id at nowNS.
func (ch ThreadChange) insert(id string, nowNS uint64) sqlText {
	var title string
	if ch.Title != nil {
		title = *ch.Title
	}
	var archived bool
	if ch.Archived != nil {
		archived = *ch.Archived
	}
	return sqlf(insertThreadMeta, holes{"thread": arg(id), "set_title": arg(boolUInt8(ch.Title != nil)), "title": arg(title),
		"set_archived": arg(boolUInt8(ch.Archived != nil)), "archived": arg(boolUInt8(archived)), "now": arg(nowNS)})
}

// ChangeThread applies ch to the thread's metadata, nowNS being the time
// of the change in Unix nanoseconds.
func (s Store) ChangeThread(ctx context.Context, id string, ch ThreadChange, nowNS uint64) error {
	if err := ch.insert(id, nowNS).exec(ctx, s.db); err != nil {
		return fmt.Errorf("insert thread meta: %w", err)
	}
	return nil
}
