package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// PrunedTurns of Turns were removed by prunes, the last at PrunedAt
	// (nil when none was): the thread's shell keeps their counts.
	PrunedTurns uint64     `json:"pruned_turns"`
	PrunedAt    *time.Time `json:"pruned_at"`
	// Preview is the text of the thread's last response (else of its last
	// turn) on one line, cut to previewRunes.
	Preview string `json:"preview"`
	// FailedCalls of its calls failed; OpenCalls have not ended: they are
	// Running while the thread was heard from (a turn started or a
	// heartbeat came) within the store's interrupted-after window, else
	// Interrupted, as on the thread's page.
	FailedCalls uint64 `json:"failed_calls"`
	OpenCalls   uint64 `json:"open_calls"`
	Running     bool   `json:"running"`
	Interrupted bool   `json:"interrupted"`
	// FirstNS is the start of its first turn; DurationNS runs from there
	// to the start of its last turn (LastNS), the end of its last call.
	FirstNS    uint64 `json:"first_ns"`
	DurationNS uint64 `json:"duration_ns"`
	// Attributes are its thread attributes, by name: the latest value of
	// each convtrace.thread.<name> its spans set (README, "Attribute
	// contract").
	Attributes map[string]string `json:"attributes"`
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

// selectThreadSums combines the summaries of each thread's projects, and
// the shells of what prunes removed of it (summariesAndShells), into one
// thread (a sum of one value is that value: a thread in one project
// keeps its exact sums) and joins its metadata. Both sides of the join are
// named: 26.x requires it of joined subqueries. The join keeps threads
// without metadata (an empty title and archived 0, the column defaults);
// argMax reads the newest thread_meta row without waiting for
// ReplacingMergeTree to merge. The first %s is the summaries (a
// subquery), the second their condition, the third the condition on the
// combined threads.
//
// Calls running count only in the live summaries: a call whose prompt a
// prune removed may end after it. A thread's attributes are the newest
// value of each name among its summaries and shells: sorted newest first
// (ties by position, so that names and values sort alike), the first of
// each name kept.
const selectThreadSums = `
SELECT thread_id, thread_project, thread_providers, thread_last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived, thread_first_prompt, thread_last_response, thread_last_turn, pruned_turns, pruned_ns,
       thread_first_ns, failed_total, open_total, thread_alive_ns, thread_attr_keys, thread_attr_values
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
        argMaxIf(last_turn, (last_turn_ns, last_turn_seq), contents > 0) AS thread_last_turn,
        sum(shell_turns) AS pruned_turns,
        max(shell_ns) AS pruned_ns,
        min(first_ns) AS thread_first_ns,
        sum(failed_calls) AS failed_total,
        sumIf(open_calls, shell_ns = 0) AS open_total,
        max(alive_ns) AS thread_alive_ns,
        groupArrayArray(attr_keys) AS all_attr_keys,
        groupArrayArray(attr_values) AS all_attr_values,
        groupArrayArray(attr_ns) AS all_attr_ns,
        arrayReverseSort((k, n, i) -> (n, i), all_attr_keys, all_attr_ns, arrayEnumerate(all_attr_ns)) AS newest_attr_keys,
        arrayReverseSort((v, n, i) -> (n, i), all_attr_values, all_attr_ns, arrayEnumerate(all_attr_ns)) AS newest_attr_values,
        arrayFilter((k, u) -> u = 1, newest_attr_keys, arrayEnumerateUniq(newest_attr_keys)) AS thread_attr_keys,
        arrayFilter((v, u) -> u = 1, newest_attr_values, arrayEnumerateUniq(newest_attr_keys)) AS thread_attr_values
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
	summariesKept      = `turns > 0`
	summariesOfProject = `project = ?`
)

var summariesOfProvider = `thread_id IN (SELECT thread_id FROM ` + summariesAndShellsSQL + ` AS p WHERE turns > 0 AND has(providers, ?))`

// summariesAndShells are the newest summaries of the threads whose
// thread_id the %s selects (the summaries of the turns stored) and the
// shells of the prunes done (the summaries of the turns removed), each
// with the turns it says were pruned and when: what selectThreadSums
// adds up per thread.
const summariesAndShells = `(
    SELECT ` + summaryColumns + `, toUInt64(0) AS shell_turns, toUInt64(0) AS shell_ns
    FROM
    (
        SELECT *
        FROM thread_summary
        WHERE %[1]s
        ORDER BY computed_ns DESC
        LIMIT 1 BY project, thread_id
    ) AS l
    UNION ALL
    SELECT ` + summaryColumns + `, turns AS shell_turns, pruned_ns AS shell_ns
    FROM
    (
        SELECT *
        FROM thread_shells
        WHERE %[1]s
        ORDER BY version DESC
        LIMIT 1 BY project, thread_id, cutoff_ns
    ) AS h
    WHERE done = 1
)`

// summariesAndShellsSQL is summariesAndShells of every thread.
var summariesAndShellsSQL = fmt.Sprintf(summariesAndShells, "1")

// selectListChoices lists what the list's filters can choose from out of
// the summaries, which the list has just brought up to date: no second pass
// over conversations.
var selectListChoices = `
SELECT groupUniqArrayIf(project, project != '') AS projects, groupUniqArrayArray(providers) AS all_providers
FROM ` + summariesAndShellsSQL + ` AS s
WHERE ` + summariesKept

// threadsOfIDs is the query of some threads, whose ids its argument
// lists, twice (a tuple, or one id with "= ?"): the newest summaries and
// the shells of each, in every project, condition inside so that only
// their rows are sorted.
func threadsOfIDs(cond string) string {
	return fmt.Sprintf(selectThreadSums, fmt.Sprintf(summariesAndShells, "thread_id "+cond),
		conditions([]string{summariesKept}), "")
}

// threadQuery is the query of one thread, whose id is its argument, twice.
var threadQuery = threadsOfIDs("= ?")

// Threads returns the page of Threads that f asks for, from summaries
// brought up to date first.
func (s Store) Threads(ctx context.Context, f ThreadFilter) (ThreadPage, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return ThreadPage{}, err
	}
	query, args := threadsQuery(f, s.aliveSince())
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

// Thread returns one Thread, archived or not, from its summaries, brought
// up to date first; ErrNotFound when it has no turn.
func (s Store) Thread(ctx context.Context, id string) (Thread, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return Thread{}, err
	}
	ts, err := s.queryThreads(ctx, threadQuery, id, id)
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

// SearchProjects returns the projects search filters on, sorted: those of
// the summaries, brought up to date first, not a pass over every turn.
func (s Store) SearchProjects(ctx context.Context) ([]string, error) {
	if err := s.refreshSummaries(ctx); err != nil {
		return nil, err
	}
	projects, _, err := s.choices(ctx, selectListChoices)
	return projects, err
}

// choices returns the projects and providers that query lists, sorted.
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
// preview come from the texts it reads, whether calls run from when the
// thread was last heard of.
func (s Store) queryThreads(ctx context.Context, query string, args ...any) ([]Thread, error) {
	aliveSince := s.aliveSince()
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
			prunedNS, aliveNS                         uint64
			attrKeys, attrValues                      []string
		)
		err := rows.Scan(&t.ID, &t.Project, &t.Providers, &t.LastNS, &t.Turns,
			&t.TokensIn, &t.TokensOut, &t.CostUSD, &override, &archived, &firstPrompt, &lastResp, &lastTurn,
			&t.PrunedTurns, &prunedNS, &t.FirstNS, &t.FailedCalls, &t.OpenCalls, &aliveNS, &attrKeys, &attrValues)
		if err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		slices.Sort(t.Providers)
		t.Providers = orEmpty(t.Providers)
		t.LastUpdate = time.Unix(0, int64(t.LastNS)).UTC()
		t.Tokens = AddKnown(t.TokensIn, t.TokensOut)
		t.CostUSD = roundKnown(t.CostUSD)
		t.Archived = archived != 0
		t.Title = threadTitle(override, firstPrompt, t.ID)
		t.Preview = oneLine(promptText(cmp.Or(lastResp, lastTurn)), previewRunes)
		if prunedNS > 0 {
			at := time.Unix(0, int64(prunedNS)).UTC()
			t.PrunedAt = &at
		}
		if t.OpenCalls > 0 {
			t.Running = aliveNS >= aliveSince
			t.Interrupted = !t.Running
		}
		t.DurationNS = t.LastNS - min(t.FirstNS, t.LastNS)
		t.Attributes = make(map[string]string, len(attrKeys))
		for i, k := range attrKeys {
			t.Attributes[k] = attrValues[i]
		}
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read threads: %w", err)
	}
	return threads, nil
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
// an unknown count or cost stays unknown rather than becoming zero. A
// float sum is a cost, rounded by roundUSD.
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
	if f, ok := any(&sum).(*float64); ok {
		*f = roundUSD(*f) // a cost: no float noise in the sum
	}
	return &sum
}
