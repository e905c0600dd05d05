package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/convtrace/convtrace/store/ddl"
)

// The change feed's reads: what thread_summary and thread_meta gained
// since a cursor, each row with the thread's state before it, so that a
// poll needs no memory of its own. A change is a new row (a newer row
// wins), so a cursor on the version columns finds it; a deletion leaves
// no row, and its caller reports it.
const (
	// selectFeedStart is where a new feed starts: the newest summary and
	// metadata versions.
	selectFeedStart = `
SELECT
    (SELECT max(computed_ns) FROM thread_summary) AS summary_ns,
    (SELECT max(updated_ns) FROM thread_meta) AS meta_ns`

	// selectSummaryChanges reads the threads whose summary was recomputed
	// after {after}: the newest summary and the newest one at or before
	// {after} (turns 0 when there is none), at most {limit} threads.
	selectSummaryChanges = `
SELECT project, thread_id, max(computed_ns) AS at,
       argMax(turns, computed_ns) AS now_turns, argMax(last_ns, computed_ns) AS now_last,
       argMaxIf(turns, computed_ns, computed_ns <= {after}) AS was_turns,
       argMaxIf(last_ns, computed_ns, computed_ns <= {after}) AS was_last
FROM thread_summary
WHERE (project, thread_id) IN (SELECT project, thread_id FROM thread_summary WHERE computed_ns > {after})
GROUP BY project, thread_id
ORDER BY at, project, thread_id
LIMIT {limit}`

	// selectSessionChanges reads the current session of some threads
	// ({ids} of {projects}) and the one before their turns after
	// {was_last} (by thread, in {ids}).
	selectSessionChanges = `
SELECT thread_id,
       argMax(session_id, (start_ns, revision)) AS now_session,
       argMaxIf(session_id, (start_ns, revision), start_ns <= arrayElement({was_last}, indexOf({ids}, thread_id))) AS was_session
FROM conversations
WHERE project IN {projects} AND thread_id IN {id_set} AND session_id != ''
GROUP BY thread_id`

	// selectMetaChanges reads the threads whose metadata changed after
	// {after}: the newest title and archived flag, and those at or before
	// {after}, at most {limit} threads.
	selectMetaChanges = `
SELECT thread_id, max(updated_ns) AS at,
       argMax(title, updated_ns) AS now_title, argMax(archived, updated_ns) AS now_archived,
       argMaxIf(title, updated_ns, updated_ns <= {after}) AS was_title,
       argMaxIf(archived, updated_ns, updated_ns <= {after}) AS was_archived
FROM thread_meta
WHERE thread_id IN (SELECT thread_id FROM thread_meta WHERE updated_ns > {after})
GROUP BY thread_id
ORDER BY at, thread_id
LIMIT {limit}`
)

// FeedLimit is the most threads one FeedChanges reports from each table;
// more says Overflow.
const FeedLimit = 500

// FeedCursor is how far a change feed has read: the newest summary
// (computed_ns) and metadata (updated_ns) versions it has seen.
type FeedCursor struct{ SummaryNS, MetaNS uint64 }

// ThreadDelta is a thread whose summary changed: Created when it had no
// summary with turns before, Gone when its rows are gone (turns 0).
// Session and WasSession are its current provider session before and
// after, when either is known.
type ThreadDelta struct {
	ThreadID, Project   string
	Turns, LastNS       uint64
	Created, Gone       bool
	Session, WasSession string
}

// MetaDelta is a thread whose title or archived flag a user changed.
type MetaDelta struct {
	ThreadID              string
	Title, WasTitle       string
	Archived, WasArchived bool
}

// FeedChanges is what changed after a cursor; Overflow says more threads
// changed than FeedLimit, and only the cursor after them is exact.
type FeedChanges struct {
	Threads  []ThreadDelta
	Meta     []MetaDelta
	Next     FeedCursor
	Overflow bool
}

// FeedStart returns the cursor of a feed that starts now, with the
// summaries brought up to date first, so that it reports nothing stored
// before.
func (s Store) FeedStart(ctx context.Context) (FeedCursor, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return FeedCursor{}, err
	}
	rows, err := s.db.Query(ctx, selectFeedStart)
	if err != nil {
		return FeedCursor{}, fmt.Errorf("query feed start: %w", err)
	}
	defer rows.Close()
	var c FeedCursor
	if rows.Next() {
		if err := rows.Scan(&c.SummaryNS, &c.MetaNS); err != nil {
			return FeedCursor{}, fmt.Errorf("scan feed start: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return FeedCursor{}, fmt.Errorf("read feed start: %w", err)
	}
	return c, nil
}

// Changes returns what changed after c: the summaries are brought up to
// date first, so new turns show as changed threads.
func (s Store) Changes(ctx context.Context, c FeedCursor) (FeedChanges, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return FeedChanges{}, err
	}
	out := FeedChanges{Next: c}
	was := map[string]uint64{}
	err := s.eachRow(ctx, "summary changes", summaryChangesSince(c.SummaryNS), func(scan func(...any) error) error {
		var d ThreadDelta
		var at, wasTurns, wasLast uint64
		if err := scan(&d.Project, &d.ThreadID, &at, &d.Turns, &d.LastNS, &wasTurns, &wasLast); err != nil {
			return err
		}
		d.Created, d.Gone = wasTurns == 0 && d.Turns > 0, d.Turns == 0
		out.Threads = append(out.Threads, d)
		out.Next.SummaryNS = max(out.Next.SummaryNS, at)
		was[d.ThreadID] = wasLast
		return nil
	})
	if err != nil {
		return FeedChanges{}, err
	}
	err = s.eachRow(ctx, "meta changes", metaChangesSince(c.MetaNS), func(scan func(...any) error) error {
		var d MetaDelta
		var at uint64
		var now, before uint8
		if err := scan(&d.ThreadID, &at, &d.Title, &now, &d.WasTitle, &before); err != nil {
			return err
		}
		d.Archived, d.WasArchived = now != 0, before != 0
		out.Meta = append(out.Meta, d)
		out.Next.MetaNS = max(out.Next.MetaNS, at)
		return nil
	})
	if err != nil {
		return FeedChanges{}, err
	}
	out.Overflow = len(out.Threads) == FeedLimit || len(out.Meta) == FeedLimit
	if err := s.addSessions(ctx, out.Threads, was); err != nil {
		return FeedChanges{}, err
	}
	return out, nil
}

func summaryChangesSince(after uint64) sqlText {
	return sqlf(selectSummaryChanges, holes{"after": arg(after), "limit": arg(FeedLimit)})
}

func metaChangesSince(after uint64) sqlText {
	return sqlf(selectMetaChanges, holes{"after": arg(after), "limit": arg(FeedLimit)})
}

// sessionChanges is selectSessionChanges of the threads ids of projects,
// whose turns up to wasLast (by thread, as ids) were seen before.
func sessionChanges(projects, ids []string, wasLast []uint64) sqlText {
	return sqlf(selectSessionChanges, holes{"was_last": arg(wasLast), "ids": arg(ids),
		"projects": arg(ddl.Tuple(projects)), "id_set": arg(ddl.Tuple(ids))})
}

// addSessions fills the sessions of the threads that are not gone.
func (s Store) addSessions(ctx context.Context, ds []ThreadDelta, was map[string]uint64) error {
	var ids, projects []string
	var wasLast []uint64
	for _, d := range ds {
		if !d.Gone {
			ids, wasLast = append(ids, d.ThreadID), append(wasLast, was[d.ThreadID])
			projects = append(projects, d.Project)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(projects)
	projects = slices.Compact(projects)
	sessions := map[string][2]string{}
	err := s.eachRow(ctx, "session changes", sessionChanges(projects, ids, wasLast), func(scan func(...any) error) error {
		var id, now, before string
		if err := scan(&id, &now, &before); err != nil {
			return err
		}
		sessions[id] = [2]string{now, before}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range ds {
		ss := sessions[ds[i].ThreadID]
		ds[i].Session, ds[i].WasSession = ss[0], ss[1]
	}
	return nil
}

// eachRow runs q and calls row for each row it answers; what names the
// read in errors.
func (s Store) eachRow(ctx context.Context, what string, q sqlText, row func(scan func(...any) error) error) error {
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return fmt.Errorf("query %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return fmt.Errorf("scan %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}
