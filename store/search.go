package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/convtrace/convtrace/store/ddl"
)

// SearchFilter is a search across threads: the text to find and the
// filters that narrow it. An empty field does not filter; FromNS and ToNS
// of 0 are no bound. With no text, every turn the filters let through is
// a hit.
type SearchFilter struct {
	Q, Project string
	// TurnFilter narrows the turns as a thread page's filters do, across
	// threads: Starred keeps the turns starred in any thread. Its Query,
	// TurnID and HideInternal are not read: Q is the search's text, and
	// search finds internal turns too.
	TurnFilter
	Model string
	// Status is one of SearchStatuses, or "" for any.
	Status string
	// After asks for the results older than it (the next page), Before
	// for those newer (the previous page); at most one is set.
	After, Before *SearchCursor
}

// SearchCursor is where a page of results ends: results are ordered by
// (start_ns, turn_id), newest first.
type SearchCursor struct {
	StartNS uint64
	TurnID  string
}

// SearchHit is a turn that matched, before its thread's title is known.
type SearchHit struct {
	TurnID, ThreadID, Project, Phase, Speaker, Agent, Role, Model, Tool string
	StartNS                                                             uint64
	Internal                                                            bool // shown on its thread's page only when asked for
	// Around is the content around the first match, with … where it was
	// cut; without a search text, the start of the content.
	Around string
}

// Search SQL, in two steps. The first finds the page's turns, newest
// first, one month partition at a time from the newest, and stops once it
// has the page: a common word costs about a month, not the table. It
// returns keys only, so its sort is a top-N of narrow columns however many
// turns match. The second reads, for those turns alone (found through the
// primary key), a window of bytes around the first match, never the whole
// of a 5 MB turn. ClickHouse 18.16 cuts by code points (substringUTF8) only
// at constant offsets, so the window is in bytes: the match's byte offset
// is found in lowerUTF8(content), which keeps every character's byte
// length, and the Go side drops the partial characters at the window's
// edges. A turn that matched by speaker only shows the start of its
// content. A turn delivered twice is one hit: its copies share a key.
const (
	// selectSearchPartitions reads the months of the parts of %s
	// (layout.parts).
	selectSearchPartitions = `
SELECT DISTINCT toUInt32(partition) AS month
FROM %s
ORDER BY month`

	// selectSearchKeys reads the months the first %s (one of the
	// searchMonth conditions) names that the second (searchMatch,
	// searchMatchIndexed, or searchAny without text) matches.
	selectSearchKeys = `
SELECT project, thread_id, start_ns, turn_id
FROM conversations
WHERE %s
  AND %s`
	searchMatch = `(positionCaseInsensitiveUTF8(content, ?) > 0 OR positionCaseInsensitiveUTF8(speaker, ?) > 0)`
	// searchMatchIndexed is the same match in the shape the search indexes
	// (ddl/sql/0016_search_indexes.sql) skip granules by: the lowercased
	// content LIKE the lowercased words (LIKE's wildcards escaped), or a
	// speaker of the set that matches.
	searchMatchIndexed = `(lowerUTF8(content) LIKE concat('%%', replaceRegexpAll(lowerUTF8(?), '([%%_\\\\])', '\\\\\\1'), '%%')
       OR speaker IN (SELECT DISTINCT speaker FROM conversations WHERE positionCaseInsensitiveUTF8(speaker, ?) > 0))`

	// selectSearchIndexes counts the search indexes the table has; on
	// servers without data-skipping indexes the system table is missing.
	selectSearchIndexes = `
SELECT count()
FROM system.data_skipping_indices
WHERE database = currentDatabase() AND table = ? AND name IN ('idx_content_ngrams', 'idx_speakers')`
	searchMonthIs     = `toYYYYMM(ts) = ?`
	searchMonthsUpTo  = `toYYYYMM(ts) <= ?`
	searchMonthsAfter = `toYYYYMM(ts) >= ?`
	// searchAny is the match of a search without text: every turn.
	searchAny   = `1`
	searchOlder = `
  AND (start_ns < ? OR (start_ns = ? AND turn_id < ?))`
	searchNewer = `
  AND (start_ns > ? OR (start_ns = ? AND turn_id > ?))`
	searchNewestFirst = `
ORDER BY start_ns DESC, turn_id DESC
LIMIT ?`
	searchOldestFirst = `
ORDER BY start_ns, turn_id
LIMIT ?`

	// selectSearchHits reads the hits of the keys, the match's byte
	// offset found by %s (searchMatchAt, or searchNoMatch without text).
	selectSearchHits = `
SELECT turn_id, thread_id, project, phase, speaker, agent, role, model, tool_name, start_ns, internal,
       %s AS match_byte,
       toUInt64(greatest(toInt64(match_byte) - ?, 1)) AS around_from,
       substring(content, around_from, ?) AS around,
       toUInt8(around_from + length(around) <= length(content)) AS cut_after,
       substring(content, 1, ?) AS head,
       length(content) AS content_len
FROM conversations
WHERE (project, thread_id, start_ns, turn_id) IN (?)
ORDER BY start_ns DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id`
	searchMatchAt = `position(lowerUTF8(content), lowerUTF8(?))`
	// searchNoMatch puts the window of a search without text at the
	// start of the content.
	searchNoMatch = `toUInt64(0)`
)

// The window read around a match holds more characters than snippet shows
// on either side, even at four bytes a character, so that snippet decides
// where the shown text starts and ends. A turn of at most searchTextBytes
// is also read whole: when it is messages JSON and their text holds the
// match, the hit shows that text, not the JSON around it.
const (
	aroundBytesBefore = 4 * SnippetRunes / 2
	aroundBytesAfter  = 4 * SnippetRunes
	searchTextBytes   = 64 << 10
)

// searchKey is the sort key of a matching turn.
type searchKey struct {
	project, thread string
	startNS         uint64
	turnID          string
}

// Search returns at most limit turns that match f, newest first, whichever
// way f pages.
func (s Store) Search(ctx context.Context, f SearchFilter, limit int) ([]SearchHit, error) {
	keys, err := s.searchKeys(ctx, f, limit)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	set := make([]clickhouse.GroupSet, len(keys))
	for i, k := range keys {
		set[i] = clickhouse.GroupSet{Value: []any{k.project, k.thread, k.startNS, k.turnID}}
	}
	window := aroundBytesBefore + len(f.Q) + aroundBytesAfter
	query, args := fmt.Sprintf(selectSearchHits, searchNoMatch), []any{}
	if f.Q != "" {
		query, args = fmt.Sprintf(selectSearchHits, searchMatchAt), []any{f.Q}
	}
	args = append(args, uint64(aroundBytesBefore), uint64(window), uint64(searchTextBytes), set)
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query search hits: %w", err)
	}
	defer rows.Close()
	var hits []SearchHit
	for rows.Next() {
		var (
			h                               SearchHit
			matchAt, aroundFrom, contentLen uint64
			cutAfter, internal              uint8
			head                            string
		)
		if err := rows.Scan(&h.TurnID, &h.ThreadID, &h.Project, &h.Phase, &h.Speaker, &h.Agent, &h.Role, &h.Model, &h.Tool,
			&h.StartNS, &internal, &matchAt, &aroundFrom, &h.Around, &cutAfter, &head, &contentLen); err != nil {
			return nil, fmt.Errorf("scan search hit: %w", err)
		}
		h.Internal = internal != 0
		if text, ok := messagesText(head, f.Q, uint64(len(head)) == contentLen); ok {
			h.Around = text
			hits = append(hits, h)
			continue
		}
		h.Around = FragmentText(strings.ToValidUTF8(h.Around, ""))
		if aroundFrom > 1 {
			h.Around = "…" + h.Around
		}
		if cutAfter != 0 {
			h.Around += "…"
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read search hits: %w", err)
	}
	return hits, nil
}

// searchKeys returns the keys of at most limit turns that match f, the
// nearest to the cursor, in the order of the page (newest first, or
// oldest first for the page before a cursor): first from the nearest
// month partition alone, which holds the page of a common word, then, if
// it falls short, from all the others in one query. The hits come newest
// first whichever it is (selectSearchHits).
func (s Store) searchKeys(ctx context.Context, f SearchFilter, limit int) ([]searchKey, error) {
	if threads, _ := f.statusThreads(0); threads != "" {
		if err := s.refreshSummaries(ctx); err != nil {
			return nil, err
		}
	}
	months, err := s.searchMonths(ctx, f)
	if err != nil || len(months) == 0 {
		return nil, err
	}
	rest := searchMonthsUpTo
	if f.Before != nil {
		rest = searchMonthsAfter
	}
	match := searchMatch
	switch {
	case f.Q == "":
		match = searchAny
	case s.searchIndexed(ctx):
		match = searchMatchIndexed
	}
	var keys []searchKey
	seen := map[searchKey]bool{}
	alive := s.aliveSince()
	for i, cond := range []string{searchMonthIs, rest}[:min(len(months), 2)] {
		earliest := months[0]
		if i == 1 {
			earliest = slices.Min(months[1:])
		}
		query, args := searchKeysQuery(f, cond, match, alive, earliest)
		// Copies of a turn delivered twice share a key: ask for twice the
		// page, and again for twice as many when copies still leave it
		// short of what the months hold.
		for n := 2 * (limit - len(keys)); ; n *= 2 {
			got, rows, err := s.searchMonth(ctx, query, append(append([]any{months[i]}, args...), uint64(n)), seen)
			if err != nil {
				return nil, err
			}
			keys = append(keys, got...)
			if rows < n || len(keys) >= limit {
				break // the months have no more, or the page is full
			}
		}
		if len(keys) >= limit {
			break
		}
	}
	return keys[:min(len(keys), limit)], nil
}

// searchMonth runs a keys query of one month, adding the keys not seen
// yet to seen; n is how many rows it returned, copies included.
func (s Store) searchMonth(ctx context.Context, query string, args []any, seen map[searchKey]bool) (keys []searchKey, n int, err error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("query search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k searchKey
		if err := rows.Scan(&k.project, &k.thread, &k.startNS, &k.turnID); err != nil {
			return nil, 0, fmt.Errorf("scan search key: %w", err)
		}
		n++
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read search keys: %w", err)
	}
	return keys, n, nil
}

// searchKeysQuery is the keys query of f for the months a searchMonth
// condition names (its first argument, then args, then the limit), the
// earliest fromMonth, that match matches; a call alive since alive (Unix
// ns) is running.
func searchKeysQuery(f SearchFilter, months, match string, alive uint64, fromMonth uint32) (string, []any) {
	query := fmt.Sprintf(selectSearchKeys, months, match)
	var args []any
	if f.Q != "" {
		args = []any{f.Q, f.Q}
	}
	cond, condArgs := f.filterConditions(alive, fromMonth)
	query += cond
	args = append(args, condArgs...)
	order := searchNewestFirst
	switch {
	case f.After != nil:
		query += searchOlder
		args = append(args, f.After.StartNS, f.After.StartNS, f.After.TurnID)
	case f.Before != nil:
		query += searchNewer
		args = append(args, f.Before.StartNS, f.Before.StartNS, f.Before.TurnID)
		order = searchOldestFirst
	}
	return query + order, args
}

// searchMonths returns the months (YYYYMM) of conversations' partitions
// that f's bounds and cursor leave, in the order the page reads them.
func (s Store) searchMonths(ctx context.Context, f SearchFilter) ([]uint32, error) {
	l, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, fmt.Sprintf(selectSearchPartitions, l.parts()))
	if err != nil {
		return nil, fmt.Errorf("query partitions: %w", err)
	}
	defer rows.Close()
	lo, hi := uint32(0), uint32(math.MaxUint32)
	if f.FromNS != 0 {
		lo = monthOf(f.FromNS)
	}
	if f.ToNS != 0 {
		hi = monthOf(f.ToNS)
	}
	switch {
	case f.After != nil:
		hi = min(hi, monthOf(f.After.StartNS))
	case f.Before != nil:
		lo = max(lo, monthOf(f.Before.StartNS))
	}
	var months []uint32
	for rows.Next() {
		var m uint32
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("scan partition: %w", err)
		}
		if lo <= m && m <= hi {
			months = append(months, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read partitions: %w", err)
	}
	if f.Before == nil {
		slices.Reverse(months) // newest first
	}
	return months, nil
}

// monthOf is toYYYYMM(ts) of a turn that started at ns: its UTC month, as
// the server's time zone, UTC, names partitions.
func monthOf(ns uint64) uint32 {
	t := time.Unix(int64(ns/uint64(time.Second)), 0).UTC()
	return uint32(t.Year()*100 + int(t.Month()))
}

// ThreadTitles returns the title of each hit's thread, as the threads
// list shows it, from the threads' summaries. The search page brings them
// up to date just before (SearchProjects); only a hit of a thread with no
// summary yet, new since, has them brought up to date again.
func (s Store) ThreadTitles(ctx context.Context, hits []SearchHit) (map[string]string, error) {
	titles := make(map[string]string)
	var ids []string
	for _, h := range hits {
		if !slices.Contains(ids, h.ThreadID) {
			ids = append(ids, h.ThreadID)
		}
	}
	for refreshed := false; len(ids) > 0; refreshed = true {
		threads, err := s.queryThreads(ctx, threadsOfIDs("IN ?"), ddl.Tuple(ids), ddl.Tuple(ids))
		if err != nil {
			return nil, err
		}
		for _, t := range threads {
			titles[t.ID] = t.Title
		}
		if refreshed || len(titles) == len(ids) {
			break
		}
		if err := s.refreshSummaries(ctx); err != nil {
			return nil, err
		}
	}
	return titles, nil
}

// SnippetRunes is how much text around a search match a result shows.
const SnippetRunes = 160

// searchIndexed reports whether conversations has the search indexes.
func (s Store) searchIndexed(ctx context.Context) bool {
	l, err := s.layout(ctx)
	return err == nil && l.search
}
