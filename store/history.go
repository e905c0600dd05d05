package store

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store/ddl"
)

// selectHistory reads messages of a thread's history by id (the messages
// table, schema.StoreHistoryOnce); LIMIT 1 BY folds copies not merged yet.
const selectHistory = `
SELECT id, message
FROM messages
WHERE thread_id = ? AND id IN ?
LIMIT 1 BY id`

// missingMessage stands in for a message of a prompt's history that is
// not stored (removed with its thread, say): the prompt still reads as
// messages, and says what it lacks.
const missingMessage = `{"role":"unknown","parts":[{"type":"text","content":"(a message of this prompt's history is not stored)"}]}`

// storedPrompt is a turn as a query read it whose content may be only the
// new messages of a prompt that repeats history.
type storedPrompt struct {
	threadID string
	history  []string // ids of the messages it repeats, in order
	content  *string  // the rest as read, possibly only its start
	cut      *bool    // whether content is only the start
}

// joinHistory puts back the whole prompt of each of ps that repeats
// history, as it was recorded, cut to limit bytes (at a rune boundary):
// one read of the messages table per thread.
func (s Store) joinHistory(ctx context.Context, ps []storedPrompt, limit int) error {
	ids := map[string]map[string]bool{}
	for _, p := range ps {
		for _, id := range p.history {
			if ids[p.threadID] == nil {
				ids[p.threadID] = map[string]bool{}
			}
			ids[p.threadID][id] = true
		}
	}
	stored := map[string]map[string]string{}
	for thread, set := range ids {
		msgs, err := s.history(ctx, thread, slices.Collect(maps.Keys(set)))
		if err != nil {
			return err
		}
		stored[thread] = msgs
	}
	for _, p := range ps {
		if len(p.history) == 0 {
			continue
		}
		earlier := make([]string, len(p.history))
		for i, id := range p.history {
			m, ok := stored[p.threadID][id]
			if !ok {
				m = missingMessage
			}
			earlier[i] = m
		}
		whole, cut := genai.JoinHistoryPrefix(earlier, *p.content, *p.cut, limit)
		if cut {
			whole = trimPartialRune(whole)
		}
		*p.content, *p.cut = whole, cut
	}
	return nil
}

// history returns the stored messages of a thread that ids name, by id.
func (s Store) history(ctx context.Context, threadID string, ids []string) (map[string]string, error) {
	rows, err := s.db.Query(ctx, selectHistory, threadID, ddl.Tuple(ids))
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	defer rows.Close()
	msgs := make(map[string]string, len(ids))
	for rows.Next() {
		var id, m string
		if err := rows.Scan(&id, &m); err != nil {
			return nil, fmt.Errorf("scan history: %w", err)
		}
		msgs[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return msgs, nil
}
