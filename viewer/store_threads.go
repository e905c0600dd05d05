package viewer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
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
}

// titleRunes is how long a title taken from a thread's first prompt may be.
const titleRunes = 80

// threadColumns aggregates one thread's turns. Of the first prompt it keeps
// 2000 runes: enough to find the user's message in messages JSON that
// opens with a system prompt, far less than a 5 MB prompt. The aliases differ from the
// column names: ClickHouse substitutes aliases into expressions, and
// sum(tokens_in) AS tokens_in reads as a cycle on some versions.
//
// sum over a Nullable column is Nullable and NULL when every value is NULL,
// on 18.16 as on 26.x: that is what keeps "unknown" apart from zero.
const threadColumns = `
        thread_id,
        any(project) AS thread_project,
        argMinIf(substringUTF8(content, 1, 2000), (start_ns, seq), role = 'prompt') AS first_prompt,
        groupUniqArrayIf(provider, provider != '') AS providers,
        max(start_ns) AS last_ns,
        count() AS turn_count,
        sum(tokens_in) AS sum_in,
        sum(tokens_out) AS sum_out,
        sum(cost_usd) AS cost_total`

// threadMetaColumns reads the newest thread_meta row of each thread without
// waiting for ReplacingMergeTree to merge.
const threadMetaColumns = `
        thread_id,
        argMax(title, updated_ns) AS meta_title,
        argMax(archived, updated_ns) AS meta_archived`

// Both sides of the join are named: 26.x requires it of joined subqueries.
// The join keeps threads without metadata (an empty title and archived 0, the
// column defaults). conversations is read FINAL so that a turn delivered
// twice counts once: copies share turn_id and so the whole sort key.
const (
	selectThreads = `
SELECT thread_id, thread_project, first_prompt, providers, last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived
FROM
(
    SELECT` + threadColumns + `
    FROM conversations FINAL
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT` + threadMetaColumns + `
    FROM thread_meta
    GROUP BY thread_id
) AS m USING thread_id
WHERE meta_archived = 0
ORDER BY last_ns DESC, thread_id
LIMIT ?`

	selectThread = `
SELECT thread_id, thread_project, first_prompt, providers, last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived
FROM
(
    SELECT` + threadColumns + `
    FROM conversations FINAL
    WHERE thread_id = ?
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT` + threadMetaColumns + `
    FROM thread_meta
    WHERE thread_id = ?
    GROUP BY thread_id
) AS m USING thread_id`
)

// threads returns the threads that are not archived, newest first, at most
// the store's thread limit.
func (s store) threads(ctx context.Context) ([]Thread, error) {
	rows, err := s.db.Query(ctx, selectThreads, uint64(s.threadLimit))
	if err != nil {
		return nil, fmt.Errorf("query threads: %w", err)
	}
	return scanThreads(rows)
}

// thread returns one thread, archived or not; errNotFound when it has no
// turn.
func (s store) thread(ctx context.Context, id string) (Thread, error) {
	rows, err := s.db.Query(ctx, selectThread, id, id)
	if err != nil {
		return Thread{}, fmt.Errorf("query thread: %w", err)
	}
	ts, err := scanThreads(rows)
	if err != nil {
		return Thread{}, err
	}
	if len(ts) == 0 {
		return Thread{}, errNotFound
	}
	return ts[0], nil
}

func scanThreads(rows driver.Rows) ([]Thread, error) {
	defer rows.Close()
	threads := []Thread{}
	for rows.Next() {
		var (
			t           Thread
			firstPrompt string
			metaTitle   string
			archived    uint8
		)
		err := rows.Scan(&t.ID, &t.Project, &firstPrompt, &t.Providers, &t.LastNS, &t.Turns,
			&t.TokensIn, &t.TokensOut, &t.CostUSD, &metaTitle, &archived)
		if err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		slices.Sort(t.Providers)
		if t.Providers == nil {
			t.Providers = []string{}
		}
		t.Title = threadTitle(metaTitle, firstPrompt, t.ID)
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

// threadTitle is the user's override when there is one, else the first
// prompt (its user message when it is messages JSON) on one line cut to
// titleRunes runes (with … when cut), else the thread id.
func threadTitle(override, firstPrompt, id string) string {
	if t := strings.TrimSpace(override); t != "" {
		return t
	}
	t := strings.Join(strings.Fields(promptText(firstPrompt)), " ")
	if t == "" {
		return id
	}
	if utf8.RuneCountInString(t) <= titleRunes {
		return t
	}
	return string([]rune(t)[:titleRunes]) + "…"
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
