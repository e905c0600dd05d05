package store

import (
	"context"
	"fmt"
)

// selectContent reads all of one turn's content, and the history it
// repeats.
const selectContent = `
SELECT content, history
FROM conversations
WHERE thread_id = ? AND turn_id = ?
ORDER BY revision DESC
LIMIT 1`

// ErrTurnNotFound means the thread has no turn with the id asked for.
var ErrTurnNotFound error = notFoundError("turn not found")

// TurnContent returns one turn's whole content; errTurnNotFound when the
// thread has no such turn.
func (s Store) TurnContent(ctx context.Context, threadID, turnID string) (string, error) {
	rows, err := s.db.Query(ctx, selectContent, threadID, turnID)
	if err != nil {
		return "", fmt.Errorf("query turn content: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("read turn content: %w", err)
		}
		return "", ErrTurnNotFound
	}
	var (
		content string
		history []string
		cut     bool
	)
	if err := rows.Scan(&content, &history); err != nil {
		return "", fmt.Errorf("scan turn content: %w", err)
	}
	rows.Close()
	err = s.joinHistory(ctx, []storedPrompt{{threadID: threadID, history: history, content: &content, cut: &cut}}, AllContent)
	return content, err
}
