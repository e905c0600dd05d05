package store

import (
	"context"
	"fmt"
	"time"

	"github.com/convtrace/convtrace/store/ddl"
)

// A prune keeps the shell of every thread it empties (prune.go), so the
// list still shows it; a shell is kept for its own retention, after which
// the emptied thread goes for good.

const (
	// selectEmptyShells lists the threads of {in_project} whose every
	// shell is done and was stored by a prune before {cutoff}, and which
	// have no turn left.
	selectEmptyShells = `
SELECT thread_id
FROM
(
    SELECT thread_id, cutoff_ns, argMax(done, version) AS is_done, argMax(pruned_ns, version) AS at
    FROM thread_shells
    WHERE {in_project}
    GROUP BY thread_id, cutoff_ns
)
GROUP BY thread_id
HAVING min(is_done) = 1 AND max(at) < {cutoff}
  AND thread_id NOT IN (SELECT thread_id FROM conversations)
ORDER BY thread_id`

	// emptyThreads is the condition of the deletion of the threads {ids}
	// that still have no turn in {turns} (conversations, as a mutation
	// names it).
	emptyThreads = `thread_id IN {ids}
  AND thread_id NOT IN (SELECT thread_id FROM {turns} WHERE thread_id IN {ids})`
)

// emptyShellsQuery is selectEmptyShells of project ("" every one), for
// prunes before cutoffNS.
func emptyShellsQuery(project string, cutoffNS uint64) sqlText {
	return sqlf(selectEmptyShells, holes{"in_project": ofProject(project), "cutoff": arg(cutoffNS)})
}

// emptiedCond is emptyThreads of ids, with the tables as a mutation names
// them.
func emptiedCond(ids []string, table func(string) string) sqlText {
	return sqlf(emptyThreads, holes{"ids": arg(ddl.Tuple(ids)), "turns": raw(table("conversations"))})
}

// emptiedTables are what is left of a thread a prune emptied: its title
// and flags, its summary's mark that it is gone, and, last, the shells that
// select it, so that a removal cut short is finished by the next.
var emptiedTables = []string{"thread_meta", "thread_summary", "thread_shells"}

// RemoveEmptyShells removes for good the threads of project ("" every
// one) that a prune before prunedBefore left with no turn: their shells,
// metadata and summary, so the threads list no longer shows them. A thread
// that has turns again keeps everything. It returns how many threads it
// removed.
func (s Store) RemoveEmptyShells(ctx context.Context, project string, prunedBefore time.Time) (int, error) {
	q := emptyShellsQuery(project, uint64(prunedBefore.UnixNano()))
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return 0, fmt.Errorf("query emptied threads: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("scan emptied thread: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read emptied threads: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	m, err := ddl.NewMutator(ctx, s.db)
	if err != nil {
		return 0, err
	}
	for _, chunk := range chunkIDs(ids) {
		if err := s.deleteFrom(ctx, m, emptiedTables, emptiedCond(chunk, m.Table), nil); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
