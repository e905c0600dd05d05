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

	// projects are all the projects of the thread's turns (Project is one
	// of them): the texts of a thread are looked up by (project, thread_id),
	// the start of the sort key.
	projects []string
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

// parseCursor reads a Cursor written by Cursor.String; "" is no cursor.
func parseCursor(param, value string) (*Cursor, error) {
	if value == "" {
		return nil, nil
	}
	ns, id, ok := strings.Cut(value, ".")
	n, err := strconv.ParseUint(ns, 10, 64)
	raw, err2 := base64.RawURLEncoding.DecodeString(id)
	if !ok || err != nil || err2 != nil {
		return nil, badParam(param, "%q is not a page cursor: take it from a Newer or Older link", value)
	}
	return &Cursor{LastNS: n, ID: string(raw)}, nil
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

// Reading a thread happens in two steps, so that the list never reads the
// content of every turn: selectThreadSums aggregates the turns without
// their content, then selectThreadTexts reads the first prompt and the
// last answer of the few threads shown.
//
// conversations is read FINAL so that a turn delivered twice counts once:
// copies share turn_id and so the whole sort key. The aliases differ from
// the column names: ClickHouse substitutes aliases into expressions, and
// sum(tokens_in) AS tokens_in reads as a cycle on some versions. sum over a
// Nullable column is Nullable and NULL when every value is NULL, on 18.16
// as on 26.x: that is what keeps "unknown" apart from zero.
//
// Both sides of the join are named: 26.x requires it of joined subqueries.
// The join keeps threads without metadata (an empty title and archived 0,
// the column defaults); argMax reads the newest thread_meta row without
// waiting for ReplacingMergeTree to merge. The %s are the fixed conditions
// below, the only SQL added to it.
const selectThreadSums = `
SELECT thread_id, thread_project, thread_projects, providers, last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived
FROM
(
    SELECT
        thread_id,
        any(project) AS thread_project,
        groupUniqArray(project) AS thread_projects,
        groupUniqArrayIf(provider, provider != '') AS providers,
        max(start_ns) AS last_ns,
        count() AS turn_count,
        sum(tokens_in) AS sum_in,
        sum(tokens_out) AS sum_out,
        sum(cost_usd) AS cost_total
    FROM conversations FINAL
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

// Conditions on the turns, applied before aggregating: project is the
// first column of the sort key, and the provider condition narrows the set
// of threads without dropping any turn of a thread kept.
const (
	// sumsOfThread names the projects of the thread too, so that the
	// primary key finds its rows.
	sumsOfThread   = `project IN (SELECT project FROM conversations WHERE thread_id = ?) AND thread_id = ?`
	sumsOfProject  = `project = ?`
	sumsOfProvider = `thread_id IN (SELECT thread_id FROM conversations WHERE provider = ?)`
)

// Conditions and orders on the aggregated threads.
const (
	threadsArchived = `meta_archived = ?`
	// threadsTitled keeps the threads whose title holds the query: the
	// override when there is one, else the first prompt's first 2000 runes
	// (as selectThreadTexts reads it; of messages JSON that includes the
	// JSON around the user's message). Runs of white space and JSON's \n,
	// \r and \t become one space, as in the title, which is on one line.
	//
	// This is the list's one query that reads content in proportion to the
	// table. PREWHERE keeps ClickHouse from decompressing the content of
	// rows that are not first prompts, but it reads the content of every
	// granule holding one, which is most of them; the %s narrows it to the
	// project filtered on (titleInProject) when there is one. The
	// condition applies after aggregating: inside the FINAL aggregate,
	// ClickHouse 18.16 runs the subquery twice.
	threadsTitled = `thread_id IN
    (
        SELECT thread_id
        FROM
        (
            SELECT thread_id, argMin(substringUTF8(content, 1, 2000), (start_ns, seq)) AS first_prompt
            FROM conversations
            PREWHERE role = 'prompt'%s AND (thread_id, start_ns) IN
            (
                SELECT thread_id, min(start_ns)
                FROM conversations
                WHERE role = 'prompt'
                GROUP BY thread_id
            )
            GROUP BY thread_id
        ) AS p
        ANY LEFT JOIN
        (
            SELECT thread_id, argMax(title, updated_ns) AS meta_title
            FROM thread_meta
            GROUP BY thread_id
        ) AS t USING thread_id
        WHERE positionCaseInsensitiveUTF8(replaceRegexpAll(if(meta_title != '', meta_title, first_prompt), '(\\\\[nrt]|\\s)+', ' '), ?) > 0
    )`
	titleInProject = ` AND project = ?`
	threadsBefore  = `(last_ns < ? OR (last_ns = ? AND thread_id > ?))`
	threadsAfter   = `(last_ns > ? OR (last_ns = ? AND thread_id < ?))`
	newestFirst    = `
ORDER BY last_ns DESC, thread_id
LIMIT ?`
	oldestFirst = `
ORDER BY last_ns, thread_id DESC
LIMIT ?`
)

// selectThreadTexts reads what the list shows of a few threads' content:
// 2000 runes of the first prompt (enough to find the user's message in
// messages JSON that opens with a system prompt, far less than a 5 MB
// prompt), of the last response and of the last turn with content. No
// FINAL: a copy of a turn has the same content, which argMin and argMax
// do not count. The argument is a list of (project, thread_id) tuples: the
// start of the sort key, which the primary key resolves to a few granules
// (thread_id alone makes ClickHouse 18.16 read the whole column).
const selectThreadTexts = `
SELECT
    thread_id,
    argMinIf(substringUTF8(content, 1, 2000), (start_ns, seq), role = 'prompt') AS first_prompt,
    argMaxIf(substringUTF8(content, 1, 2000), (start_ns, seq), role = 'response' AND content != '') AS last_response,
    argMaxIf(substringUTF8(content, 1, 2000), (start_ns, seq), content != '') AS last_turn
FROM conversations
WHERE (project, thread_id) IN (?)
GROUP BY thread_id`

// selectThreadChoices lists what the list's filters can choose from.
const selectThreadChoices = `
SELECT groupUniqArrayIf(project, project != '') AS projects, groupUniqArrayIf(provider, provider != '') AS all_providers
FROM conversations`

// threadsQuery is the query of the page of threads that f asks for, and
// its arguments. It asks for one thread more than the page holds, which
// tells whether there is a page beyond.
func threadsQuery(f ThreadFilter) (string, []any) {
	var where []string
	var args []any
	if f.Project != "" {
		where, args = append(where, sumsOfProject), append(args, f.Project)
	}
	if f.Provider != "" {
		where, args = append(where, sumsOfProvider), append(args, f.Provider)
	}
	having, order := []string{threadsArchived}, newestFirst
	args = append(args, boolUInt8(f.Archived))
	if f.Query != "" {
		inProject := ""
		if f.Project != "" {
			inProject, args = titleInProject, append(args, f.Project)
		}
		having, args = append(having, fmt.Sprintf(threadsTitled, inProject)), append(args, f.Query)
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
	return fmt.Sprintf(selectThreadSums, conditions(where), conditions(having)) + order, args
}

// threadQuery is the query of one thread, whose id is both its arguments.
func threadQuery() string {
	return fmt.Sprintf(selectThreadSums, conditions([]string{sumsOfThread}), "")
}

// threads returns the page of threads that f asks for.
func (s store) threads(ctx context.Context, f ThreadFilter) (ThreadPage, error) {
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
	first, last := f.After, f.Before // when the page is empty
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
	if err := s.addTexts(ctx, threads); err != nil {
		return ThreadPage{}, err
	}
	page.Threads = threads
	return page, nil
}

// thread returns one thread, archived or not; errNotFound when it has no
// turn.
func (s store) thread(ctx context.Context, id string) (Thread, error) {
	ts, err := s.queryThreads(ctx, threadQuery(), id, id)
	if err != nil {
		return Thread{}, err
	}
	if len(ts) == 0 {
		return Thread{}, errNotFound
	}
	if err := s.addTexts(ctx, ts); err != nil {
		return Thread{}, err
	}
	return ts[0], nil
}

// threadChoices returns the projects and providers that have turns, sorted.
func (s store) threadChoices(ctx context.Context) (projects, providers []string, err error) {
	rows, err := s.db.Query(ctx, selectThreadChoices)
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

func (s store) queryThreads(ctx context.Context, query string, args ...any) ([]Thread, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query threads: %w", err)
	}
	defer rows.Close()
	threads := []Thread{}
	for rows.Next() {
		var (
			t        Thread
			archived uint8
		)
		err := rows.Scan(&t.ID, &t.Project, &t.projects, &t.Providers, &t.LastNS, &t.Turns,
			&t.TokensIn, &t.TokensOut, &t.CostUSD, &t.Title, &archived)
		if err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		slices.Sort(t.Providers)
		t.Providers = orEmpty(t.Providers)
		t.LastUpdate = time.Unix(0, int64(t.LastNS)).UTC()
		t.Tokens = addKnown(t.TokensIn, t.TokensOut)
		t.Archived = archived != 0
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read threads: %w", err)
	}
	return threads, nil
}

// addTexts sets the title and preview of threads, whose Title holds the
// title override ("" for none).
func (s store) addTexts(ctx context.Context, threads []Thread) error {
	if len(threads) == 0 {
		return nil
	}
	var keys []clickhouse.GroupSet
	for _, t := range threads {
		for _, p := range t.projects {
			keys = append(keys, clickhouse.GroupSet{Value: []any{p, t.ID}})
		}
	}
	rows, err := s.db.Query(ctx, selectThreadTexts, keys)
	if err != nil {
		return fmt.Errorf("query thread texts: %w", err)
	}
	defer rows.Close()
	type texts struct{ firstPrompt, lastResponse, lastTurn string }
	byID := make(map[string]texts, len(threads))
	for rows.Next() {
		var id string
		var tx texts
		if err := rows.Scan(&id, &tx.firstPrompt, &tx.lastResponse, &tx.lastTurn); err != nil {
			return fmt.Errorf("scan thread texts: %w", err)
		}
		byID[id] = tx
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read thread texts: %w", err)
	}
	for i := range threads {
		t, tx := &threads[i], byID[threads[i].ID]
		t.Title = threadTitle(t.Title, tx.firstPrompt, t.ID)
		t.Preview = oneLine(promptText(cmp.Or(tx.lastResponse, tx.lastTurn)), previewRunes)
	}
	return nil
}

// threadTitle is the user's override when there is one, else the first
// prompt (its user message when it is messages JSON) on one line cut to
// titleRunes runes (with … when cut), else the thread id.
func threadTitle(override, firstPrompt, id string) string {
	if t := strings.TrimSpace(override); t != "" {
		return t
	}
	if t := oneLine(promptText(firstPrompt), titleRunes); t != "" {
		return t
	}
	return id
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

// addKnown adds the values that are known; nil when neither is.
func addKnown(a, b *uint64) *uint64 {
	if a == nil && b == nil {
		return nil
	}
	var sum uint64
	for _, v := range []*uint64{a, b} {
		if v != nil {
			sum += *v
		}
	}
	return &sum
}
