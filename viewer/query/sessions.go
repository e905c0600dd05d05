package query

import (
	"context"
	"fmt"
)

// selectCurrentSession is the session id of a thread's newest turn that
// has one (of one provider, unless the argument is empty): the session a
// resumed run continues, which a run that started a new one replaces.
const selectCurrentSession = `
SELECT session_id
FROM conversations
WHERE thread_id = ? AND session_id != '' AND (? = '' OR provider = ?)
ORDER BY start_ns DESC, revision DESC
LIMIT 1`

// CurrentSession returns the thread's current provider session id, of
// provider when it is not empty: the session id of the thread's newest
// turn that carries one, "" when none does.
func CurrentSession(ctx context.Context, db DB, threadID, provider string) (string, error) {
	return Store{db: db}.CurrentSession(ctx, threadID, provider)
}

func (s Store) CurrentSession(ctx context.Context, threadID, provider string) (string, error) {
	rows, err := s.db.Query(ctx, selectCurrentSession, threadID, provider, provider)
	if err != nil {
		return "", fmt.Errorf("query current session: %w", err)
	}
	defer rows.Close()
	var session string
	if rows.Next() {
		if err := rows.Scan(&session); err != nil {
			return "", fmt.Errorf("scan current session: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read current session: %w", err)
	}
	return session, nil
}
