package viewer

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema/genai"
)

// Thread is one thread of the threads list: what its turns add up to, and
// the user's title override from thread_meta. Sums are nil when no turn
// reported the value (JSON null, shown as —).
type Thread struct {
	ID         string    `json:"thread_id"`
	Project    string    `json:"project"`
	Title      string    `json:"title"`
	Providers  []string  `json:"providers"` // distinct, sorted
	LastUpdate time.Time `json:"last_update"`
	LastNS     uint64    `json:"last_ns"` // start of the thread's last turn
	Turns      uint64    `json:"turns"`
	TokensIn   *uint64   `json:"tokens_in"`
	TokensOut  *uint64   `json:"tokens_out"`
	Tokens     *uint64   `json:"tokens"` // in + out
	CostUSD    *float64  `json:"cost_usd"`
	Archived   bool      `json:"archived"`
	// Preview is the text of the thread's last response (else of its last
	// turn) on one line, cut to previewRunes.
	Preview string `json:"preview"`
}

// ThreadFilter narrows the threads list and picks its page; an empty field
// does not filter.
type ThreadFilter struct {
	Project  string
	Provider string // threads with at least one turn from it
	Query    string // in the title, case-insensitively
	Archived bool   // only archived threads; without it only the others
	// Before asks for the page of threads older than the cursor, After for
	// the one newer; neither is the newest page.
	Before, After *Cursor
	Limit         int
}

// Cursor is a position in the threads list, which is ordered by the start
// of each thread's last turn, newest first, then by thread id.
type Cursor struct {
	LastNS uint64
	ID     string
}

// String encodes the cursor for a URL: the id is base64 so that any thread
// id survives.
func (c Cursor) String() string {
	return strconv.FormatUint(c.LastNS, 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(c.ID))
}

// ThreadPage is one page of the threads list, with the cursors of the
// pages beside it (nil at either end).
type ThreadPage struct {
	Threads      []Thread
	Newer, Older *Cursor
}

const (
	// titleRunes is how long a title taken from a thread's first prompt may be.
	titleRunes = 80
	// previewRunes is how long a thread's one-line preview may be.
	previewRunes = 120
)

// The list reads thread_summary, which holds per (project, thread) what
// the list shows and filters on, computed so that a turn delivered twice
// counts once. Aggregating FINAL over the whole table on every request is
// what made the list slow; the summary is recomputed only for the threads
// whose raw rows changed (see refreshSummaries). summarizeThreads is that
// computation, also run directly for the one thread of a thread page.
//
// It reads the rows FINAL would: one per sort key (project, thread_id,
// start_ns, turn_id), which LIMIT 1 BY keeps (copies of a turn are alike,
// and share a partition since ts derives from start_ns). On ClickHouse
// 18.16, FINAL over a set of threads costs seconds whatever their number;
// LIMIT 1 BY over the same rows costs a tenth of that.
//
// The aliases differ from the column names: ClickHouse substitutes aliases
// into expressions, and sum(tokens_in) AS tokens_in reads as a cycle on
// some versions. sum over a Nullable column is Nullable and NULL when
// every value is NULL, on 18.16 as on 26.x: that is what keeps "unknown"
// apart from zero. The texts are 2000 runes of the first prompt (enough to
// find the user's message in messages JSON that opens with a system
// prompt, far less than a 5 MB prompt), of the last response and of the
// last turn with content, each with its position (start_ns, seq) and a
// count saying whether there is one, so that the texts of a thread in two
// projects combine (selectThreadSums). The %s is the condition on the
// turns, the only SQL added to it.
const summarizeThreads = `
SELECT
    project,
    thread_id,
    groupUniqArrayIf(provider, provider != '') AS providers,
    max(start_ns) AS last_ns,
    count() AS turns,
    sum(tokens_in) AS tokens_in_sum,
    sum(tokens_out) AS tokens_out_sum,
    sum(cost_usd) AS cost_sum,
    countIf(role = 'prompt') AS prompts,
    argMinIf(start_ns, (start_ns, seq), role = 'prompt') AS first_prompt_ns,
    argMinIf(seq, (start_ns, seq), role = 'prompt') AS first_prompt_seq,
    argMinIf(substringUTF8(content, 1, 2000), (start_ns, seq), role = 'prompt') AS first_prompt,
    countIf(role = 'response' AND content != '') AS responses,
    argMaxIf(start_ns, (start_ns, seq), role = 'response' AND content != '') AS last_response_ns,
    argMaxIf(seq, (start_ns, seq), role = 'response' AND content != '') AS last_response_seq,
    argMaxIf(substringUTF8(content, 1, 2000), (start_ns, seq), role = 'response' AND content != '') AS last_response,
    countIf(content != '') AS contents,
    argMaxIf(start_ns, (start_ns, seq), content != '') AS last_turn_ns,
    argMaxIf(seq, (start_ns, seq), content != '') AS last_turn_seq,
    argMaxIf(substringUTF8(content, 1, 2000), (start_ns, seq), content != '') AS last_turn
FROM
(
    SELECT project, thread_id, turn_id, provider, start_ns, tokens_in, tokens_out, cost_usd, role, seq, content
    FROM conversations
    WHERE %s
    LIMIT 1 BY project, thread_id, start_ns, turn_id
) AS t
GROUP BY project, thread_id`

// summaryColumns are thread_summary's columns that summarizeThreads
// computes, in its order.
const summaryColumns = `project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn`

// latestSummaries is the newest row of every (project, thread) in
// thread_summary: the one with the highest computed_ns, one row even on a
// tie. Not FINAL with a WHERE: ClickHouse 18.16 may move the condition to
// PREWHERE, before FINAL folds the rows, and bring back an older row.
const latestSummaries = `(
    SELECT *
    FROM thread_summary
    ORDER BY computed_ns DESC
    LIMIT 1 BY project, thread_id
)`

// selectThreadSums combines the summaries of each thread's projects into
// one thread (a sum of one value is that value: a thread in one project
// keeps its exact sums) and joins its metadata. Both sides of the join are
// named: 26.x requires it of joined subqueries. The join keeps threads
// without metadata (an empty title and archived 0, the column defaults);
// argMax reads the newest thread_meta row without waiting for
// ReplacingMergeTree to merge. The first %s is the summaries (a
// subquery), the second their condition, the third the condition on the
// combined threads.
const selectThreadSums = `
SELECT thread_id, thread_project, thread_providers, thread_last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived, thread_first_prompt, thread_last_response, thread_last_turn
FROM
(
    SELECT
        thread_id,
        any(project) AS thread_project,
        groupUniqArrayArray(providers) AS thread_providers,
        max(last_ns) AS thread_last_ns,
        sum(turns) AS turn_count,
        sum(tokens_in_sum) AS sum_in,
        sum(tokens_out_sum) AS sum_out,
        sum(cost_sum) AS cost_total,
        argMinIf(first_prompt, (first_prompt_ns, first_prompt_seq), prompts > 0) AS thread_first_prompt,
        argMaxIf(last_response, (last_response_ns, last_response_seq), responses > 0) AS thread_last_response,
        argMaxIf(last_turn, (last_turn_ns, last_turn_seq), contents > 0) AS thread_last_turn
    FROM %s AS s
    %s
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT
        thread_id,
        argMax(title, updated_ns) AS meta_title,
        argMax(archived, updated_ns) AS meta_archived
    FROM thread_meta
    GROUP BY thread_id
) AS m USING thread_id
%s`

// Conditions on the summaries, applied before combining: the provider
// condition narrows the set of threads without dropping any project of a
// thread kept. turns = 0 marks a thread whose rows are gone.
const (
	summariesKept       = `turns > 0`
	summariesOfProject  = `project = ?`
	summariesOfProvider = `thread_id IN (SELECT thread_id FROM ` + latestSummaries + ` AS p WHERE turns > 0 AND has(providers, ?))`
	// sumsOfKeys is the threads of some (project, thread_id) pairs, the
	// start of the sort key, which the primary key resolves to a few
	// granules (thread_id alone makes ClickHouse 18.16 read the column).
	sumsOfKeys = `(project, thread_id) IN (?)`
	// sumsOfThread names the projects of the thread too, so that the
	// primary key finds its rows.
	sumsOfThread = `project IN (SELECT project FROM conversations WHERE thread_id = ?) AND thread_id = ?`
)

// Conditions and orders on the combined threads.
const (
	threadsArchived = `meta_archived = ?`
	// threadsTitled keeps the threads whose title holds the query: the
	// override when there is one, else the first prompt's first 2000 runes
	// as the summary holds it (of messages JSON that includes the JSON
	// around the user's message). Runs of white space and JSON's \n, \r
	// and \t become one space, as in the title, which is on one line.
	threadsTitled = `positionCaseInsensitiveUTF8(replaceRegexpAll(if(meta_title != '', meta_title, thread_first_prompt), '(\\\\[nrt]|\\s)+', ' '), ?) > 0`
	threadsBefore = `(thread_last_ns < ? OR (thread_last_ns = ? AND thread_id > ?))`
	threadsAfter  = `(thread_last_ns > ? OR (thread_last_ns = ? AND thread_id < ?))`
	newestFirst   = `
ORDER BY thread_last_ns DESC, thread_id
LIMIT ?`
	oldestFirst = `
ORDER BY thread_last_ns, thread_id DESC
LIMIT ?`
)

// selectThreadChoices lists the projects and providers that have turns.
const selectThreadChoices = `
SELECT groupUniqArrayIf(project, project != '') AS projects, groupUniqArrayIf(provider, provider != '') AS all_providers
FROM conversations`

// selectListChoices lists what the list's filters can choose from out of
// the summaries, which the list has just brought up to date: no second pass
// over conversations.
const selectListChoices = `
SELECT groupUniqArrayIf(project, project != '') AS projects, groupUniqArrayArray(providers) AS all_providers
FROM ` + latestSummaries + ` AS s
WHERE ` + summariesKept

// threadsQuery is the query of the page of threads that f asks for, and
// its arguments, over the summaries. It asks for one thread more than the
// page holds, which tells whether there is a page beyond.
func threadsQuery(f ThreadFilter) (string, []any) {
	where := []string{summariesKept}
	var args []any
	if f.Project != "" {
		where, args = append(where, summariesOfProject), append(args, f.Project)
	}
	if f.Provider != "" {
		where, args = append(where, summariesOfProvider), append(args, f.Provider)
	}
	having, order := []string{threadsArchived}, newestFirst
	args = append(args, boolUInt8(f.Archived))
	if f.Query != "" {
		having, args = append(having, threadsTitled), append(args, f.Query)
	}
	switch {
	case f.Before != nil:
		having = append(having, threadsBefore)
		args = append(args, f.Before.LastNS, f.Before.LastNS, f.Before.ID)
	case f.After != nil:
		having, order = append(having, threadsAfter), oldestFirst
		args = append(args, f.After.LastNS, f.After.LastNS, f.After.ID)
	}
	args = append(args, uint64(f.Limit+1))
	return fmt.Sprintf(selectThreadSums, latestSummaries, conditions(where), conditions(having)) + order, args
}

// keyedThreadsQuery is the query of the threads whose (project,
// thread_id) pairs its one argument lists, summarized directly from their
// turns.
var keyedThreadsQuery = fmt.Sprintf(selectThreadSums, "("+fmt.Sprintf(summarizeThreads, sumsOfKeys)+")", "", "")

// threadQuery is the query of one thread, whose id is both its
// arguments: its summaries computed directly. The primary key keeps the
// summary to the thread's granules, but finding the thread's projects
// (sumsOfThread) reads the whole thread_id column: part of the fixed cost
// of every thread page.
func threadQuery() string {
	return fmt.Sprintf(selectThreadSums, "("+fmt.Sprintf(summarizeThreads, sumsOfThread)+")", "", "")
}

// Threads returns the page of Threads that f asks for, from summaries
// brought up to date first.
func (s Store) Threads(ctx context.Context, f ThreadFilter) (ThreadPage, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return ThreadPage{}, err
	}
	query, args := threadsQuery(f)
	threads, err := s.queryThreads(ctx, query, args...)
	if err != nil {
		return ThreadPage{}, err
	}
	var page ThreadPage
	more := len(threads) > f.Limit
	threads = threads[:min(len(threads), f.Limit)]
	if f.After != nil {
		slices.Reverse(threads)
	}
	var first, last *Cursor // an empty page links nowhere
	if len(threads) > 0 {
		first, last = threadCursor(threads[0]), threadCursor(threads[len(threads)-1])
	}
	switch {
	case f.Before != nil:
		page.Newer, page.Older = first, last
		if !more {
			page.Older = nil
		}
	case f.After != nil:
		page.Newer, page.Older = first, last
		if !more {
			page.Newer = nil
		}
	case more:
		page.Older = last
	}
	page.Threads = threads
	return page, nil
}

// Thread returns one Thread, archived or not; errNotFound when it has no
// turn.
func (s Store) Thread(ctx context.Context, id string) (Thread, error) {
	ts, err := s.queryThreads(ctx, threadQuery(), id, id)
	if err != nil {
		return Thread{}, err
	}
	if len(ts) == 0 {
		return Thread{}, ErrNotFound
	}
	return ts[0], nil
}

// ListChoices returns the projects and providers the threads list filters
// on, sorted.
func (s Store) ListChoices(ctx context.Context) (projects, providers []string, err error) {
	return s.choices(ctx, selectListChoices)
}

// SearchProjects returns the projects search filters on, sorted.
func (s Store) SearchProjects(ctx context.Context) ([]string, error) {
	projects, _, err := s.choices(ctx, selectThreadChoices)
	return projects, err
}

// choices returns the projects and providers that query
// (selectThreadChoices or selectListChoices) lists, sorted.
func (s Store) choices(ctx context.Context, query string) (projects, providers []string, err error) {
	rows, err := s.db.Query(ctx, query)
	if err != nil {
		return nil, nil, fmt.Errorf("query thread choices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&projects, &providers); err != nil {
			return nil, nil, fmt.Errorf("scan thread choices: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read thread choices: %w", err)
	}
	slices.Sort(projects)
	slices.Sort(providers)
	return orEmpty(projects), orEmpty(providers), nil
}

// conditions joins SQL conditions into a WHERE clause; none is "".
func conditions(cs []string) string {
	if len(cs) == 0 {
		return ""
	}
	return "WHERE " + strings.Join(cs, "\n  AND ")
}

// queryThreads runs a query of selectThreadSums; the title and the
// preview come from the texts it reads.
func (s Store) queryThreads(ctx context.Context, query string, args ...any) ([]Thread, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query threads: %w", err)
	}
	defer rows.Close()
	threads := []Thread{}
	for rows.Next() {
		var (
			t                                         Thread
			archived                                  uint8
			override, firstPrompt, lastResp, lastTurn string
		)
		err := rows.Scan(&t.ID, &t.Project, &t.Providers, &t.LastNS, &t.Turns,
			&t.TokensIn, &t.TokensOut, &t.CostUSD, &override, &archived, &firstPrompt, &lastResp, &lastTurn)
		if err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		slices.Sort(t.Providers)
		t.Providers = orEmpty(t.Providers)
		t.LastUpdate = time.Unix(0, int64(t.LastNS)).UTC()
		t.Tokens = AddKnown(t.TokensIn, t.TokensOut)
		t.Archived = archived != 0
		t.Title = threadTitle(override, firstPrompt, t.ID)
		t.Preview = oneLine(promptText(cmp.Or(lastResp, lastTurn)), previewRunes)
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read threads: %w", err)
	}
	return threads, nil
}

// threadTitle is the user's override when there is one, else the first
// non-empty line of the first prompt (its user message when it is messages
// JSON) cut to titleRunes runes (with … when cut), else the thread id.
func threadTitle(override, firstPrompt, id string) string {
	if t := strings.TrimSpace(override); t != "" {
		return t
	}
	if t := oneLine(firstLine(promptText(firstPrompt)), titleRunes); t != "" {
		return t
	}
	return id
}

// firstLine is text's first line that is not blank.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// oneLine puts text on one line, runs of white space becoming one space,
// and cuts it to at most n runes, ending with … when cut.
func oneLine(text string, n int) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= n {
		return t
	}
	return string([]rune(t)[:n]) + "…"
}

func threadCursor(t Thread) *Cursor { return &Cursor{LastNS: t.LastNS, ID: t.ID} }

func boolUInt8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// orEmpty makes a nil list an empty one, so JSON shows [] rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// AddKnown adds the values that are known; nil when neither is, so that
// an unknown count or cost stays unknown rather than becoming zero.
func AddKnown[T uint64 | float64](a, b *T) *T {
	if a == nil && b == nil {
		return nil
	}
	var sum T
	for _, v := range []*T{a, b} {
		if v != nil {
			sum += *v
		}
	}
	return &sum
}

// Keeping thread_summary exact. Each (project, thread) has a fingerprint
// of its raw rows, read without FINAL (cheap: no content, no merging):
// how many rows, and the sum of a hash of each row's (turn_id, start_ns),
// the part of the sort key that FINAL folds copies on within a thread. A
// summary stores the fingerprint read BEFORE it was computed, so:
//   - a turn or a copy arriving after the fingerprint was read (even
//     while the summary is computed) changes the count: the next request
//     recomputes, never trusting a summary that may have missed it;
//   - a merge folding copies lowers the count: recomputed, same totals;
//   - a new turn arriving while a merge folds a copy keeps the count but
//     changes the hash sum, unless hash(new turn) = hash(folded copy)
//     modulo 2^64: a 64-bit hash collision, the only way a summary is
//     taken as fresh when it is not.
//
// A fingerprint that matches means the rows, as a multiset of (turn_id,
// start_ns), are those the fingerprint was read from; the distinct keys
// that summarizeThreads reads (one row each, as FINAL would; copies of a
// turn are alike) can only have grown between that read and the
// summary's, and have not since, so they are those the summary was
// computed from. Rows dropped by TTL leave no fingerprint: their summary
// is marked gone.
const (
	selectFingerprints = `
SELECT project, thread_id, count() AS n, sum(cityHash64(turn_id, start_ns)) AS h
FROM conversations
GROUP BY project, thread_id`

	selectSummaryFingerprints = `
SELECT project, thread_id, rows_seen, rows_hash, turns
FROM ` + latestSummaries + ` AS s`

	// insertSummaries recomputes the summaries of some threads of one
	// project. Its arguments: the computed_ns wished for, the
	// fingerprints' counts, the thread ids, their hash sums, the thread
	// ids again, the project, and the ids as a tuple for IN. computed_ns
	// passes every stored one, so that a recomputed row wins even when the
	// clock is behind. Exec with INSERT ... VALUES (?) hangs over the
	// native protocol on 18.16; INSERT ... SELECT does not.
	insertSummaries = `
INSERT INTO thread_summary (computed_ns, rows_seen, rows_hash, ` + summaryColumns + `)
SELECT
    greatest(?, (SELECT max(computed_ns) + 1 FROM thread_summary)),
    toUInt64(arrayElement(?, indexOf(?, thread_id))),
    toUInt64(arrayElement(?, indexOf(?, thread_id))),
    ` + summaryColumns + `
FROM (%s)`

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

	// summariesOfThreads is the condition of insertSummaries on the turns.
	summariesOfThreads = `project = ? AND thread_id IN ?`
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
)

// chunkIDs splits ids into chunks within the limits of one insertSummaries.
func chunkIDs(ids []string) [][]string {
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

// threadKey names the rows of a thread in one project.
type threadKey struct{ project, thread string }

// fingerprint is what a summary was computed from: the count and the hash
// sum of its thread's raw rows.
type fingerprint struct{ rows, hash uint64 }

// refreshSummaries recomputes the summaries whose thread's rows changed
// since they were computed, and marks as gone those whose rows are gone.
// Requests that arrive while a refresh runs share it rather than each
// recomputing the same threads; the refresh outlives a caller that gives
// up, so the others still get it.
func (s Store) refreshSummaries(ctx context.Context) error {
	if s.flights == nil {
		return s.refreshSummariesNow(ctx)
	}
	ch := s.flights.DoChan("thread_summary", func() (any, error) {
		return nil, s.refreshSummariesNow(context.WithoutCancel(ctx))
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s Store) refreshSummariesNow(ctx context.Context) error {
	var (
		now, stored map[threadKey]fingerprint
		live        map[threadKey]bool
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		now, err = s.readFingerprints(gctx)
		return err
	})
	g.Go(func() (err error) {
		stored, live, err = s.readSummaryFingerprints(gctx)
		return err
	})
	if err := g.Wait(); err != nil {
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
	for project, ids := range stale {
		for _, chunk := range chunkIDs(ids) {
			counts, hashes := make([]uint64, len(chunk)), make([]uint64, len(chunk))
			for i, id := range chunk {
				fp := now[threadKey{project, id}]
				counts[i], hashes[i] = fp.rows, fp.hash
			}
			query := fmt.Sprintf(insertSummaries, fmt.Sprintf(summarizeThreads, summariesOfThreads))
			err := s.db.Exec(ctx, query, computed, counts, chunk, hashes, chunk, project, idTuple(chunk))
			if err != nil {
				return fmt.Errorf("insert thread summaries: %w", err)
			}
		}
	}
	for project, ids := range gone {
		for _, chunk := range chunkIDs(ids) {
			if err := s.db.Exec(ctx, insertGone, computed, project, idTuple(chunk)); err != nil {
				return fmt.Errorf("insert gone thread summaries: %w", err)
			}
		}
	}
	return nil
}

// readFingerprints reads the fingerprint of every thread's rows.
func (s Store) readFingerprints(ctx context.Context) (map[threadKey]fingerprint, error) {
	rows, err := s.db.Query(ctx, selectFingerprints)
	if err != nil {
		return nil, fmt.Errorf("query thread fingerprints: %w", err)
	}
	defer rows.Close()
	fps := map[threadKey]fingerprint{}
	for rows.Next() {
		var k threadKey
		var fp fingerprint
		if err := rows.Scan(&k.project, &k.thread, &fp.rows, &fp.hash); err != nil {
			return nil, fmt.Errorf("scan thread fingerprint: %w", err)
		}
		fps[k] = fp
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read thread fingerprints: %w", err)
	}
	return fps, nil
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

// idTuple binds thread ids as a tuple, ('a', 'b'), which IN takes; a
// slice binds as an array, which it does not.
func idTuple(ids []string) clickhouse.GroupSet {
	set := clickhouse.GroupSet{Value: make([]any, len(ids))}
	for i, id := range ids {
		set.Value[i] = id
	}
	return set
}

// promptText is what a title shows of a first prompt: when it is messages
// JSON, the first user message (else the first message) that decodes from
// the prefix given; else the prompt as written.
func promptText(prefix string) string {
	msgs, _ := genai.Decode(prefix)
	for _, m := range msgs {
		if text := m.Text(); m.Role == "user" && text != "" {
			return text
		}
	}
	for _, m := range msgs {
		if text := m.Text(); text != "" {
			return text
		}
	}
	return prefix
}
