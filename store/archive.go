package store

import (
	"context"
	"fmt"
)

// IdleThread is a thread whose last turn started before a time.
type IdleThread struct {
	ID      string
	Project string // of its first turn, when it has turns in several
	LastNS  uint64
}

// selectIdleThreads lists the threads whose every turn started before
// {cutoff} and that have a turn in {project} (any, when it is empty).
const selectIdleThreads = `
SELECT thread_id, argMin(project, start_ns) AS first_project, max(start_ns) AS last_start
FROM conversations
GROUP BY thread_id
HAVING ({project} = '' OR countIf(project = {project}) > 0) AND last_start < {cutoff}
ORDER BY thread_id`

// IdleThreads returns the threads of project (of any when empty) none of
// whose turns started at or after beforeNS: those convtrace archive writes
// out and removes.
func (s Store) IdleThreads(ctx context.Context, beforeNS uint64, project string) ([]IdleThread, error) {
	q := sqlf(selectIdleThreads, holes{"project": arg(project), "cutoff": arg(beforeNS)})
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query idle threads: %w", err)
	}
	defer rows.Close()
	var ts []IdleThread
	for rows.Next() {
		var t IdleThread
		if err := rows.Scan(&t.ID, &t.Project, &t.LastNS); err != nil {
			return nil, fmt.Errorf("scan idle thread: %w", err)
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read idle threads: %w", err)
	}
	return ts, nil
}
