package store

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// selectCurrentSession is the session id of the newest turn of {thread}
// that has one (of {provider}, unless it is empty) and that no warning of
// the thread names as refused by its agent ({rejected}): the session a
// resumed run continues, which a run that started a new one replaces.
const selectCurrentSession = `
SELECT session_id
FROM conversations
WHERE thread_id = {thread} AND session_id != '' AND ({provider} = '' OR provider = {provider})
  AND session_id NOT IN
  (
      SELECT attributes.value[indexOf(attributes.key, {rejected})]
      FROM conversations
      WHERE thread_id = {thread} AND has(attributes.key, {rejected})
  )
ORDER BY start_ns DESC, revision DESC
LIMIT 1`

// CurrentSession returns the thread's current provider session id, of
// provider when it is not empty: the session id of the thread's newest
// turn that carries one, "" when none does.
func CurrentSession(ctx context.Context, db DB, threadID, provider string) (string, error) {
	return Store{db: db}.CurrentSession(ctx, threadID, provider)
}

func (s Store) CurrentSession(ctx context.Context, threadID, provider string) (string, error) {
	return firstString(ctx, s.db, "current session", sqlf(selectCurrentSession, holes{"thread": arg(threadID), "provider": arg(provider), "rejected": arg(schema.KeyRejectedSession)}))
}

// firstString returns the one string column of the first row q answers, ""
// for none; what names the read in errors.
func firstString(ctx context.Context, db DB, what string, q sqlText) (string, error) {
	rows, err := db.Query(ctx, q.text, q.args...)
	if err != nil {
		return "", fmt.Errorf("query %s: %w", what, err)
	}
	defer rows.Close()
	var v string
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return "", fmt.Errorf("scan %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", what, err)
	}
	return v, nil
}

// selectThreadOfSession is the thread whose newest turn carries {session}.
const selectThreadOfSession = `
SELECT thread_id
FROM conversations
WHERE session_id = {session}
ORDER BY start_ns DESC, revision DESC
LIMIT 1`

// ThreadOfSession returns the thread that holds provider session id
// session (the newest, should several), "" when none does.
func ThreadOfSession(ctx context.Context, db DB, session string) (string, error) {
	return firstString(ctx, db, "thread of session", sqlf(selectThreadOfSession, holes{"session": arg(session)}))
}
