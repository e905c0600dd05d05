package query

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// SearchFilter is a search across threads: the text to find and the bounds
// that narrow it. An empty field does not filter; FromNS and ToNS of 0 are
// no bound.
type SearchFilter struct {
	Q, Project, Role string
	FromNS, ToNS     uint64
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
	TurnID, ThreadID, Project, Phase, Speaker, Role, Model string
	StartNS                                                uint64
	Internal                                               bool // shown on its thread's page only when asked for
	// Around is the content around the first match, with … where it was
	// cut.
	Around string
}

// Search SQL. Only a window of bytes around the first match is read of each
// matching turn's content, never the whole of a 5 MB turn. ClickHouse 18.16
// cuts by code points (substringUTF8) only at constant offsets, so the
// window is in bytes: the match's byte offset is found in lowerUTF8(content),
// which keeps every character's byte length, and the Go side drops the
// partial characters at the window's edges. A turn that matched by speaker
// only shows the start of its content. LIMIT 1 BY turn_id keeps one copy of
// a turn delivered twice; the outer LIMIT lets the sort stop at a page.
const (
	selectSearch = `
SELECT turn_id, thread_id, project, phase, speaker, role, model, start_ns, internal,
       position(lowerUTF8(content), lowerUTF8(?)) AS match_byte,
       toUInt64(greatest(toInt64(match_byte) - ?, 1)) AS around_from,
       substring(content, around_from, ?) AS around,
       toUInt8(around_from + length(around) <= length(content)) AS cut_after
FROM conversations
WHERE (positionCaseInsensitiveUTF8(content, ?) > 0 OR positionCaseInsensitiveUTF8(speaker, ?) > 0)`
	searchProject = `
  AND project = ?`
	searchRole = `
  AND role = ?`
	searchFrom = `
  AND start_ns >= ?`
	searchTo = `
  AND start_ns <= ?`
	searchOlder = `
  AND (start_ns < ? OR (start_ns = ? AND turn_id < ?))`
	searchNewer = `
  AND (start_ns > ? OR (start_ns = ? AND turn_id > ?))`
	searchNewestFirst = `
ORDER BY start_ns DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT ?`
	searchOldestFirst = `
ORDER BY start_ns, turn_id, revision DESC
LIMIT 1 BY turn_id
LIMIT ?`
)

// The window read around a match holds more characters than snippet shows
// on either side, even at four bytes a character, so that snippet decides
// where the shown text starts and ends.
const (
	aroundBytesBefore = 4 * SnippetRunes / 2
	aroundBytesAfter  = 4 * SnippetRunes
)

// search returns at most limit turns that match f, newest first, whichever
// way f pages.
func (s Store) Search(ctx context.Context, f SearchFilter, limit int) ([]SearchHit, error) {
	query := selectSearch
	window := aroundBytesBefore + len(f.Q) + aroundBytesAfter
	args := []any{f.Q, uint64(aroundBytesBefore), uint64(window), f.Q, f.Q}
	if f.Project != "" {
		query += searchProject
		args = append(args, f.Project)
	}
	if f.Role != "" {
		query += searchRole
		args = append(args, f.Role)
	}
	if f.FromNS != 0 {
		query += searchFrom
		args = append(args, f.FromNS)
	}
	if f.ToNS != 0 {
		query += searchTo
		args = append(args, f.ToNS)
	}
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
	query += order
	args = append(args, uint64(limit))

	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query search: %w", err)
	}
	defer rows.Close()
	var hits []SearchHit
	for rows.Next() {
		var (
			h                   SearchHit
			matchAt, aroundFrom uint64
			cutAfter, internal  uint8
		)
		if err := rows.Scan(&h.TurnID, &h.ThreadID, &h.Project, &h.Phase, &h.Speaker, &h.Role, &h.Model,
			&h.StartNS, &internal, &matchAt, &aroundFrom, &h.Around, &cutAfter); err != nil {
			return nil, fmt.Errorf("scan search hit: %w", err)
		}
		h.Internal = internal != 0
		h.Around = strings.ToValidUTF8(h.Around, "")
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
	if order == searchOldestFirst {
		slices.Reverse(hits)
	}
	return hits, nil
}

// ThreadTitles returns the title of each hit's thread, as the threads
// list shows it, from the turns of the projects the hits are in.
func (s Store) ThreadTitles(ctx context.Context, hits []SearchHit) (map[string]string, error) {
	titles := make(map[string]string)
	if len(hits) == 0 {
		return titles, nil
	}
	seen := map[[2]string]bool{}
	var keys []clickhouse.GroupSet
	for _, h := range hits {
		if k := [2]string{h.Project, h.ThreadID}; !seen[k] {
			seen[k] = true
			keys = append(keys, clickhouse.GroupSet{Value: []any{h.Project, h.ThreadID}})
		}
	}
	threads, err := s.queryThreads(ctx, keyedThreadsQuery, keys)
	if err != nil {
		return nil, err
	}
	for _, t := range threads {
		titles[t.ID] = t.Title
	}
	return titles, nil
}

// SnippetRunes is how much text around a search match a result shows.
const SnippetRunes = 160
