package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/failpoint"
)

// PruneScope is what a prune removes: every turn and span that started
// before BeforeNS, of Project when it is not empty.
type PruneScope struct {
	BeforeNS uint64
	Project  string
}

// cond is pruneScope of p.
func (p PruneScope) cond() sqlText {
	return sqlf(pruneScope, holes{"cutoff": arg(p.BeforeNS), "in_project": ofProject(p.Project)})
}

// PrunePlan is what a prune removes: whole partitions where every row of
// one is in scope, the rest row by row.
type PrunePlan struct {
	Removal
	// WholeThreads are the threads left with no turn; the others keep
	// their newer turns. Every one keeps its shell in the threads list.
	WholeThreads uint64 `json:"whole_threads"`
	// Partitions of conversations and of spans dropped whole.
	Partitions     []string `json:"partitions"`
	SpanPartitions []string `json:"span_partitions"`
	// Unfinished is how many threads an interrupted prune left half done,
	// which this one finishes first.
	Unfinished uint64 `json:"unfinished"`
}

const (
	// pruneScope is the condition on conversations and spans of a prune:
	// before {cutoff}, {in_project} (ofProject).
	pruneScope = `start_ns < {cutoff} AND {in_project}`

	// selectPruneSize counts threads and turns by a 64-bit hash of their
	// ids: sets of numbers, not of strings, a third of the time at
	// millions of turns. {scope} is a pruneScope.
	selectPruneSize = `
SELECT uniqExact(cityHash64(project, thread_id)), uniqExact(cityHash64(turn_id)), sum(length(content))
FROM conversations
WHERE {scope}`

	// selectPruneWhole counts the threads {in_project} a prune before
	// {cutoff} leaves with no turn.
	selectPruneWhole = `
SELECT count()
FROM
(
    SELECT project, thread_id
    FROM conversations
    WHERE {in_project}
    GROUP BY project, thread_id
    HAVING max(start_ns) < {cutoff}
)`

	selectPruneSpans = `SELECT uniqExact(span_id) FROM spans WHERE {scope}`

	// selectPruneNotes counts the {notes} (prunedNotes) a prune removes.
	selectPruneNotes = `SELECT uniqExact(thread_id, turn_id) FROM turn_notes WHERE {notes}`

	// prunedNotes selects the notes of the turns a prune removes, in
	// {scope}. Notes are few: the turns looked up are those of threads
	// with notes, not every turn in scope. {turns} and {notes} are
	// conversations and turn_notes, as a mutation of turn_notes names them
	// (ddl.Mutator's Table).
	prunedNotes = `(thread_id, turn_id) IN (
    SELECT thread_id, turn_id
    FROM {turns}
    WHERE {scope} AND thread_id IN (SELECT thread_id FROM {notes}))`

	// selectWholePartitions lists the partitions (toYYYYMM of ts, the
	// partition key of conversations and of spans) of {table} every row
	// of which is before {cutoff} and of {project} ('' every one).
	selectWholePartitions = `
SELECT toString(toYYYYMM(ts)) AS p
FROM {table}
GROUP BY p
HAVING max(start_ns) < {cutoff} AND countIf({project} != '' AND project != {project}) = 0
ORDER BY p`

	// insertShells stores the {summaries} of what a prune of {scope}
	// ending at {cutoff} removes of each thread, not done yet.
	insertShells = `
INSERT INTO thread_shells (scope, cutoff_ns, pruned_ns, version, done, removed_bytes, ` + summaryColumns + `)
SELECT {scope}, {cutoff}, {now}, {now}, 0, removed_bytes, ` + summaryColumns + `
FROM ({summaries})`

	// latestShells is the newest row of each shell.
	latestShells = `(
    SELECT *
    FROM thread_shells
    ORDER BY version DESC
    LIMIT 1 BY project, thread_id, cutoff_ns
)`

	// selectUnfinishedPrunes lists the prunes whose shells are not done:
	// their scope, cutoff and how many threads.
	selectUnfinishedPrunes = `
SELECT scope, cutoff_ns, count()
FROM ` + latestShells + ` AS h
WHERE done = 0
GROUP BY scope, cutoff_ns
ORDER BY cutoff_ns`

	// insertShellsDone marks the shells of the prune of {scope} ending at
	// {cutoff} done, as {version}.
	insertShellsDone = `
INSERT INTO thread_shells (project, thread_id, cutoff_ns, scope, pruned_ns, version, done, removed_bytes, ` + summaryValueColumns + `)
SELECT project, thread_id, cutoff_ns, scope, pruned_ns, {version}, 1, removed_bytes, ` + summaryValueColumns + `
FROM ` + latestShells + ` AS h
WHERE done = 0 AND scope = {scope} AND cutoff_ns = {cutoff}`

	// selectShellThreads lists the threads of one prune, for their
	// summaries. Arguments: the scope, the cutoff.
	selectShellThreads = `
SELECT DISTINCT project, thread_id
FROM thread_shells
WHERE scope = ? AND cutoff_ns = ?`

	// deletePrunedMessages is the condition of the deletion of a prune's
	// history messages, once its turns are gone: those of its threads left
	// with no turn. {shells} and {turns} are thread_shells and
	// conversations, as a mutation of messages names them.
	deletePrunedMessages = `thread_id IN (SELECT thread_id FROM {shells} WHERE scope = {scope} AND cutoff_ns = {cutoff})
  AND thread_id NOT IN (SELECT thread_id FROM {turns})`
)

// notesOf is prunedNotes of scope, with the tables as a mutation names
// them (ddl.Mutator.Table).
func notesOf(scope PruneScope, table func(string) string) sqlText {
	return sqlf(prunedNotes, holes{"scope": scope.cond(), "turns": raw(table("conversations")), "notes": raw(table("turn_notes"))})
}

// messagesOf is deletePrunedMessages of scope, with the tables as a
// mutation names them.
func messagesOf(scope PruneScope, table func(string) string) sqlText {
	return sqlf(deletePrunedMessages, holes{"shells": raw(table("thread_shells")), "turns": raw(table("conversations")),
		"scope": arg(scope.Project), "cutoff": arg(scope.BeforeNS)})
}

// whole is selectPruneWhole of p.
func (p PruneScope) whole() sqlText {
	return sqlf(selectPruneWhole, holes{"cutoff": arg(p.BeforeNS), "in_project": ofProject(p.Project)})
}

// done is insertShellsDone of p as version.
func (p PruneScope) done(version uint64) sqlText {
	return sqlf(insertShellsDone, holes{"version": arg(version), "scope": arg(p.Project), "cutoff": arg(p.BeforeNS)})
}

// summarizeShells summarizes the threads of the turns cond selects, with
// the bytes of their stored content.
func summarizeShells(cond sqlText) sqlText {
	return summarize(sqlf(foldedTurns, holes{"cond": cond}), sqlf(threadAttrsOf, holes{"cond": cond}), `,
        sum(length(content)) AS removed_bytes`, "")
}

// PlanPrune returns what Prune of scope would remove.
func (s Store) PlanPrune(ctx context.Context, scope PruneScope) (PrunePlan, error) {
	var p PrunePlan
	reads := []struct {
		what string
		q    sqlText
		dest []any
	}{
		{"turns", sqlf(selectPruneSize, holes{"scope": scope.cond()}), []any{&p.Threads, &p.Turns, &p.Bytes}},
		{"threads left empty", scope.whole(), []any{&p.WholeThreads}},
		{"spans", sqlf(selectPruneSpans, holes{"scope": scope.cond()}), []any{&p.Spans}},
		{"notes", sqlf(selectPruneNotes, holes{"notes": notesOf(scope, ddl.Mutator{}.Table)}), []any{&p.Notes}},
	}
	for _, r := range reads {
		if err := queryRow(ctx, s.db, r.q, r.dest...); err != nil {
			return PrunePlan{}, fmt.Errorf("read the %s to prune: %w", r.what, err)
		}
	}
	var err error
	if p.Partitions, err = s.wholePartitions(ctx, "conversations", scope); err != nil {
		return PrunePlan{}, err
	}
	if p.SpanPartitions, err = s.wholePartitions(ctx, "spans", scope); err != nil {
		return PrunePlan{}, err
	}
	unfinished, err := s.unfinishedPrunes(ctx)
	if err != nil {
		return PrunePlan{}, err
	}
	for _, u := range unfinished {
		p.Unfinished += u.threads
	}
	return p, nil
}

// Prune removes what scope selects and keeps the shell of every thread it
// touches (thread_shells): the threads list shows the thread with its
// counts before pruning, marked pruned. It first finishes any prune that
// was interrupted. progress, when not nil, is told each step.
//
// The steps, each safe to run again: the shells are stored, not done;
// the notes of the turns in scope go; the cost and latency summaries of
// the days before the cutoff are marked stale; partitions wholly in scope
// are dropped and the rest of the rows deleted; the history messages of
// threads left with no turn go; the touched threads' summaries are
// recomputed, then the shells marked done. A prune interrupted before its
// shells are done is finished by the next one, which does not store those
// threads' shells again: their removed turns count once.
func (s Store) Prune(ctx context.Context, scope PruneScope, progress func(string)) (PrunePlan, error) {
	if progress == nil {
		progress = func(string) {}
	}
	unfinished, err := s.unfinishedPrunes(ctx)
	if err != nil {
		return PrunePlan{}, err
	}
	for _, u := range unfinished {
		progress(fmt.Sprintf("finishing an interrupted prune of %d threads", u.threads))
		if err := s.removePruned(ctx, u.scope, progress); err != nil {
			return PrunePlan{}, err
		}
	}
	plan, err := s.PlanPrune(ctx, scope)
	if err != nil || plan.Turns == 0 && plan.Spans == 0 {
		return plan, err
	}
	q := sqlf(insertShells, holes{"scope": arg(scope.Project), "cutoff": arg(scope.BeforeNS),
		"now": arg(uint64(time.Now().UnixNano())), "summaries": summarizeShells(scope.cond())})
	if err := q.exec(ctx, s.db); err != nil {
		return PrunePlan{}, fmt.Errorf("store the shells of pruned threads: %w", err)
	}
	failpoint.Hit(FailPruneShells)
	progress(fmt.Sprintf("kept the shells of %d threads", plan.Threads))
	return plan, s.removePruned(ctx, scope, progress)
}

// pruneTables are the tables a prune removes rows of by their start: the
// rows, and their lookups, whose rows start with the newest they stand for.
var pruneTables = []string{"conversations", "spans", "trace_threads", "thread_traces"}

// unfinishedPrune is a prune whose shells are stored but not done.
type unfinishedPrune struct {
	scope   PruneScope
	threads uint64
}

func (s Store) unfinishedPrunes(ctx context.Context) ([]unfinishedPrune, error) {
	rows, err := s.db.Query(ctx, selectUnfinishedPrunes)
	if err != nil {
		return nil, fmt.Errorf("query unfinished prunes: %w", err)
	}
	defer rows.Close()
	var us []unfinishedPrune
	for rows.Next() {
		var u unfinishedPrune
		if err := rows.Scan(&u.scope.Project, &u.scope.BeforeNS, &u.threads); err != nil {
			return nil, fmt.Errorf("scan unfinished prune: %w", err)
		}
		us = append(us, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read unfinished prunes: %w", err)
	}
	return us, nil
}

// removePruned removes the rows of a prune whose shells are stored, then
// marks them done and brings the touched threads' summaries up to date.
func (s Store) removePruned(ctx context.Context, scope PruneScope, progress func(string)) error {
	m, err := ddl.NewMutator(ctx, s.db)
	if err != nil {
		return err
	}
	waiting := func(mutations, parts uint64) {
		if mutations > 0 {
			progress(fmt.Sprintf("deleting: %d mutations, %d parts to rewrite", mutations, parts))
		}
	}
	if err := s.deleteFrom(ctx, m, []string{"turn_notes"}, notesOf(scope, m.Table), waiting); err != nil {
		return err
	}
	w, err := Begin(ctx, s.db, Change{ToNS: scope.BeforeNS})
	if err != nil {
		return err
	}
	for _, table := range pruneTables {
		parts, err := s.wholePartitions(ctx, table, scope)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if err := m.DropPartition(ctx, s.db, table, p); err != nil {
				return err
			}
			progress(fmt.Sprintf("dropped partition %s of %s", p, table))
		}
		if err := s.deleteFrom(ctx, m, []string{table}, scope.cond(), waiting); err != nil {
			return err
		}
	}
	if err := w.Done(ctx); err != nil {
		return err
	}
	if err := s.deleteFrom(ctx, m, []string{"messages"}, messagesOf(scope, m.Table), waiting); err != nil {
		return err
	}
	failpoint.Hit(FailPruneRemoved)
	// The summaries before the mark: a prune cut short between them is
	// not done, and the next one summarizes its threads again, whose
	// removed turns then count once (in the shells) whichever run ends it.
	if err := s.recomputeThreads(ctx, selectShellThreads, scope.Project, scope.BeforeNS); err != nil {
		return err
	}
	failpoint.Hit(FailPruneSummarized)
	if err := scope.done(uint64(time.Now().UnixNano())).exec(ctx, s.db); err != nil {
		return fmt.Errorf("mark pruned shells done: %w", err)
	}
	return nil
}

// Failpoints of a prune (package failpoint), beside those of its
// deletions (FailDeleteSubmitted).
const (
	FailPruneShells     = "prune.shells"     // the shells stored, not done
	FailPruneRemoved    = "prune.removed"    // the rows gone, summaries not recomputed
	FailPruneSummarized = "prune.summarized" // summaries recomputed, shells not marked done
)

// wholePartitions lists the partitions of table every row of which scope
// selects. The partition key of conversations and spans is toYYYYMM(ts),
// whose partition ids are the numbers themselves.
func (s Store) wholePartitions(ctx context.Context, table string, scope PruneScope) ([]string, error) {
	q := sqlf(selectWholePartitions, holes{"table": raw(table), "cutoff": arg(scope.BeforeNS), "project": arg(scope.Project)})
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query partitions of %s to drop: %w", table, err)
	}
	defer rows.Close()
	var ps []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("scan partition of %s: %w", table, err)
		}
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return nil, fmt.Errorf("partition %q of %s is not a month", p, table)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read partitions of %s: %w", table, err)
	}
	return ps, nil
}
