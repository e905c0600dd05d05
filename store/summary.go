package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/convtrace/convtrace/store/ddl"
	"golang.org/x/sync/errgroup"
)

// Keeping thread_summary exact: a request recomputes only the threads that
// new parts of conversations touch (changes.go), else those whose
// fingerprint changed; docs/design/summaries.md says why that is exact.
const (
	// selectFingerprints reads the fingerprints of the threads {cond}
	// (a condition on conversations) selects, and how many distinct turns
	// each has: fewer than rows when a turn has copies.
	selectFingerprints = `
SELECT project, thread_id, count() AS n, sum(cityHash64(turn_id, start_ns)) AS h, uniqExact(turn_id) AS u
FROM conversations
WHERE {cond}
GROUP BY project, thread_id`

	// selectTouchedThreads reads which threads some {parts} of {table}
	// hold rows of.
	selectTouchedThreads = `
SELECT DISTINCT project, thread_id
FROM {table}
WHERE _part IN {parts}`

	// selectSummaryFingerprints reads the fingerprint of each newest
	// summary; that of a summary of an older layout as none, so that it
	// is recomputed.
	selectSummaryFingerprints = `
SELECT project, thread_id, if(layout = ` + summaryLayout + `, rows_seen, 0) AS seen, rows_hash, turns
FROM ` + latestSummaries + ` AS s`

	// insertSummaries stores the {summaries} of some threads of one
	// project, each with its fingerprint ({counts} and {hashes}, by
	// thread in {ids}). computed_ns passes every stored one, so that a
	// recomputed row wins even when the clock is behind. Exec with
	// INSERT ... VALUES (?) hangs over the native protocol on 18.16;
	// INSERT ... SELECT does not.
	insertSummaries = `
INSERT INTO thread_summary (computed_ns, layout, rows_seen, rows_hash, ` + summaryColumns + `)
SELECT
    greatest({computed}, (SELECT max(computed_ns) + 1 FROM thread_summary)),
    ` + summaryLayout + `,
    toUInt64(arrayElement({counts}, indexOf({ids}, thread_id))),
    toUInt64(arrayElement({hashes}, indexOf({ids}, thread_id))),
    ` + summaryColumns + `
FROM ({summaries})`

	// insertGone marks as gone the threads of one project whose rows are
	// all gone (TTL): a row with turns = 0, which the list skips.
	// Arguments: the computed_ns wished for, the project, the thread ids as
	// a tuple.
	insertGone = `
INSERT INTO thread_summary (project, thread_id, computed_ns)
SELECT project, thread_id, greatest(?, (SELECT max(computed_ns) + 1 FROM thread_summary))
FROM thread_summary
WHERE project = ? AND thread_id IN ?
GROUP BY project, thread_id`

	// threadsOf is the condition on the turns of some threads of a
	// project.
	threadsOf = `project = {project} AND thread_id IN {ids}`
)

// Limits of one insertSummaries: at most summaryChunk threads, and at
// most summaryChunkBytes of their ids, which it lists three times, so that
// the statement stays well below ClickHouse's max_query_size (256 KiB).
// Chunks keep the first request on a big table, which computes every
// summary, from holding one huge aggregate in memory; what each chunk
// stored stays, should the request be cancelled.
const (
	summaryChunk      = 1000
	summaryChunkBytes = 40 << 10
	// summaryChunksAtOnce is how many chunks a cold build stores at once.
	summaryChunksAtOnce = 2
)

// chunkIDs splits ids into chunks within the limits of one insertSummaries.
// It sorts them first, so that each chunk is a range of the table's sort
// key (project, thread_id, …) and reads only that range's granules: chunks
// of ids in any other order would each read most of the table.
func chunkIDs(ids []string) [][]string {
	slices.Sort(ids)
	var chunks [][]string
	start, size := 0, 0
	for i, id := range ids {
		if i > start && (i-start == summaryChunk || size+len(id) > summaryChunkBytes) {
			chunks, start, size = append(chunks, ids[start:i]), i, 0
		}
		size += len(id)
	}
	if start < len(ids) {
		chunks = append(chunks, ids[start:])
	}
	return chunks
}

// threadSummaryState names what thread_summary has read in seen_parts. A
// new summaryLayout takes a new name, so that the first refresh after an
// upgrade, knowing nothing, reads every fingerprint and recomputes the
// summaries of the older layout.
const threadSummaryState = "thread_summary/" + summaryLayout

// threadKey names the rows of a thread in one project.
type threadKey struct{ project, thread string }

// fingerprint is what a summary was computed from: the count and the hash
// sum of its thread's raw rows.
type fingerprint struct{ rows, hash uint64 }

// refreshSummaries recomputes the summaries of the threads that parts of
// conversations not read yet hold rows of (changes.go), or, when there is
// no telling what changed, of every thread whose fingerprint changed, and
// marks as gone those whose rows are gone. Concurrent requests share one
// refresh (catchUp).
func (s Store) refreshSummaries(ctx context.Context) error {
	return s.catchUp(ctx, threadSummaryState, s.refreshAllSummaries, s.refreshTouchedSummaries)
}

// refreshTouchedSummaries recomputes the summaries of the threads parts
// hold rows of.
func (s Store) refreshTouchedSummaries(ctx context.Context, parts []part) error {
	touched := map[threadKey]bool{}
	err := eachSource(parts, func(src *partSource, names []string) error {
		q := sqlf(selectTouchedThreads, holes{"table": raw(src.table), "parts": arg(ddl.Tuple(names))})
		return readThreads(ctx, src.db, touched, q.text, q.args...)
	})
	if err != nil {
		return err
	}
	return s.recomputeThreadSet(ctx, touched)
}

// recomputeThreads recomputes the summaries of the threads a query of
// (project, thread_id) returns, and marks as gone those with no row left
// (a prune removed them).
func (s Store) recomputeThreads(ctx context.Context, query string, args ...any) error {
	touched := map[threadKey]bool{}
	if err := readThreads(ctx, s.db, touched, query, args...); err != nil {
		return err
	}
	return s.recomputeThreadSet(ctx, touched)
}

// readThreads adds the threads a query of (project, thread_id) returns to
// set.
func readThreads(ctx context.Context, db DB, set map[threadKey]bool, query string, args ...any) error {
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("query threads to summarize: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k threadKey
		if err := rows.Scan(&k.project, &k.thread); err != nil {
			return fmt.Errorf("scan thread to summarize: %w", err)
		}
		set[k] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read threads to summarize: %w", err)
	}
	return nil
}

// recomputeThreadSet recomputes the summaries of the threads of set, and
// marks as gone those with no row left.
func (s Store) recomputeThreadSet(ctx context.Context, set map[threadKey]bool) error {
	touched := map[string][]string{}
	for k := range set {
		touched[k.project] = append(touched[k.project], k.thread)
	}
	computed := uint64(time.Now().UnixNano())
	for project, ids := range touched {
		for _, chunk := range chunkIDs(ids) {
			now, copies, err := s.readFingerprints(ctx, ofThreads(project, chunk))
			if err != nil {
				return err
			}
			if err := s.storeSummaries(ctx, computed, project, chunk, now, copies); err != nil {
				return err
			}
			gone := slices.DeleteFunc(slices.Clone(chunk), func(id string) bool {
				_, ok := now[threadKey{project, id}]
				return ok
			})
			if len(gone) == 0 {
				continue
			}
			if err := s.markGone(ctx, computed, project, gone); err != nil {
				return err
			}
		}
	}
	return nil
}

// refreshAllSummaries recomputes the summaries whose thread's fingerprint
// changed, reading the fingerprint of every thread, and marks as gone those
// whose rows are gone.
func (s Store) refreshAllSummaries(ctx context.Context) error {
	stored, live, err := s.readSummaryFingerprints(ctx)
	if err != nil {
		return err
	}
	if len(stored) == 0 {
		return s.buildAllSummaries(ctx)
	}
	now, copies, err := s.readFingerprints(ctx, raw("1"))
	if err != nil {
		return err
	}
	stale, gone := map[string][]string{}, map[string][]string{}
	for k, fp := range now {
		if old, ok := stored[k]; !ok || old != fp {
			stale[k.project] = append(stale[k.project], k.thread)
		}
	}
	for k := range live {
		if _, ok := now[k]; !ok {
			gone[k.project] = append(gone[k.project], k.thread)
		}
	}
	computed := uint64(time.Now().UnixNano())
	// Chunks side by side, two at a time.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(summaryChunksAtOnce)
	for project, ids := range stale {
		for _, chunk := range chunkIDs(ids) {
			g.Go(func() error { return s.storeSummaries(gctx, computed, project, chunk, now, copies) })
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for project, ids := range gone {
		for _, chunk := range chunkIDs(ids) {
			if err := s.markGone(ctx, computed, project, chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// markGone marks the summaries of some threads of one project as gone.
func (s Store) markGone(ctx context.Context, computed uint64, project string, ids []string) error {
	if err := s.db.Exec(ctx, insertGone, computed, project, ddl.Tuple(ids)); err != nil {
		return fmt.Errorf("insert gone thread summaries: %w", err)
	}
	return nil
}

// The first build, when thread_summary holds nothing: one pass over
// conversations stores every summary (insertAllSummaries), then the
// threads whose turns have copies, which it stored with a zero hash, are
// summarized again with the copies folded. Its aggregate may spill to
// disk past allSummariesMemory, so that a large table's first build does
// not hold every thread's state in memory.
const (
	insertAllSummaries = `
INSERT INTO thread_summary (computed_ns, layout, rows_seen, rows_hash, ` + summaryColumns + `)
SELECT {computed}, ` + summaryLayout + `, rows_n, rows_h, ` + summaryColumns + `
FROM ({summaries})`
	selectCopiedThreads = `
SELECT project, thread_id
FROM thread_summary
WHERE computed_ns = ? AND rows_hash = 0`
	allSummariesMemory = 1 << 30
)

// buildAllSummaries is the first build of thread_summary.
func (s Store) buildAllSummaries(ctx context.Context) error {
	computed := uint64(time.Now().UnixNano())
	spill := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{
		"max_bytes_before_external_group_by": allSummariesMemory,
	}))
	q := sqlf(insertAllSummaries, holes{"computed": arg(computed), "summaries": summarizeAllThreads})
	if err := q.exec(spill, s.db); err != nil {
		return fmt.Errorf("insert thread summaries: %w", err)
	}
	return s.recomputeThreads(ctx, selectCopiedThreads, computed)
}

// storeSummaries recomputes the summaries of some threads of one project,
// storing with each the fingerprint in now it was computed after. A
// thread none of whose turns has a copy (copies) is summarized straight
// from its rows; the others fold their copies first (summarizeThreads),
// which costs several times more.
func (s Store) storeSummaries(ctx context.Context, computed uint64, project string, ids []string, now map[threadKey]fingerprint, copies map[threadKey]bool) error {
	var plain, copied []string
	for _, id := range ids {
		if copies[threadKey{project, id}] {
			copied = append(copied, id)
		} else {
			plain = append(plain, id)
		}
	}
	for _, set := range []struct {
		ids       []string
		summarize func(cond sqlText) sqlText
	}{{plain, summarizePlainThreads}, {copied, summarizeThreads}} {
		if len(set.ids) == 0 {
			continue
		}
		counts, hashes := make([]uint64, len(set.ids)), make([]uint64, len(set.ids))
		for i, id := range set.ids {
			fp := now[threadKey{project, id}]
			counts[i], hashes[i] = fp.rows, fp.hash
		}
		q := sqlf(insertSummaries, holes{"computed": arg(computed), "counts": arg(counts), "hashes": arg(hashes),
			"ids": arg(set.ids), "summaries": set.summarize(ofThreads(project, set.ids))})
		if err := q.exec(ctx, s.db); err != nil {
			return fmt.Errorf("insert thread summaries: %w", err)
		}
	}
	return nil
}

// ofThreads is threadsOf for ids of project.
func ofThreads(project string, ids []string) sqlText {
	return sqlf(threadsOf, holes{"project": arg(project), "ids": arg(ddl.Tuple(ids))})
}

// readFingerprints reads the fingerprint of the rows of each thread that
// cond, a condition on conversations, selects, and which of them have a
// turn with copies.
func (s Store) readFingerprints(ctx context.Context, cond sqlText) (map[threadKey]fingerprint, map[threadKey]bool, error) {
	q := sqlf(selectFingerprints, holes{"cond": cond})
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query thread fingerprints: %w", err)
	}
	defer rows.Close()
	fps, copies := map[threadKey]fingerprint{}, map[threadKey]bool{}
	for rows.Next() {
		var (
			k     threadKey
			fp    fingerprint
			turns uint64
		)
		if err := rows.Scan(&k.project, &k.thread, &fp.rows, &fp.hash, &turns); err != nil {
			return nil, nil, fmt.Errorf("scan thread fingerprint: %w", err)
		}
		fps[k] = fp
		if turns != fp.rows {
			copies[k] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read thread fingerprints: %w", err)
	}
	return fps, copies, nil
}

// readSummaryFingerprints reads the fingerprint each newest summary was
// computed from, and which summaries are of threads not gone.
func (s Store) readSummaryFingerprints(ctx context.Context) (map[threadKey]fingerprint, map[threadKey]bool, error) {
	rows, err := s.db.Query(ctx, selectSummaryFingerprints)
	if err != nil {
		return nil, nil, fmt.Errorf("query summary fingerprints: %w", err)
	}
	defer rows.Close()
	fps, live := map[threadKey]fingerprint{}, map[threadKey]bool{}
	for rows.Next() {
		var k threadKey
		var fp fingerprint
		var turns uint64
		if err := rows.Scan(&k.project, &k.thread, &fp.rows, &fp.hash, &turns); err != nil {
			return nil, nil, fmt.Errorf("scan summary fingerprint: %w", err)
		}
		fps[k] = fp
		if turns > 0 {
			live[k] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read summary fingerprints: %w", err)
	}
	return fps, live, nil
}
