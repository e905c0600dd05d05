package store

import (
	"context"
	"fmt"
)

// Caps on the attributes a turn shows on the page and in the turns API: a
// span may carry any number, of any size.
const (
	pageAttributesStr     = "50"
	pageAttributeRunesStr = "1024"
)

// selectAttributes reads all of one turn's attributes.
const selectAttributes = `
SELECT attributes.key, attributes.value
FROM conversations
WHERE thread_id = ? AND turn_id = ?
ORDER BY revision DESC
LIMIT 1`

// TurnAttributes returns all of one turn's attributes; errTurnNotFound
// when the thread has no such turn.
func (s Store) TurnAttributes(ctx context.Context, threadID, turnID string) (map[string]string, error) {
	rows, err := s.db.Query(ctx, selectAttributes, threadID, turnID)
	if err != nil {
		return nil, fmt.Errorf("query turn attributes: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read turn attributes: %w", err)
		}
		return nil, ErrTurnNotFound
	}
	var keys, values []string
	if err := rows.Scan(&keys, &values); err != nil {
		return nil, fmt.Errorf("scan turn attributes: %w", err)
	}
	return attributeMap(keys, values), nil
}

func attributeMap(keys, values []string) map[string]string {
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		if i < len(values) {
			m[k] = values[i]
		}
	}
	return m
}
