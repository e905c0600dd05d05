package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convtrace/convtrace/store/page"
)

// SearchFacets are the values the search's filters offer: of each column,
// the most frequent across the project's turns (every project's when none
// is given), at most facetValues of them, sorted. A filter takes any
// value; these are what the form suggests.
type SearchFacets struct {
	Tools    []string `json:"tools"`
	Agents   []string `json:"agents"` // sub-agents; the main agent is AgentMain
	Sessions []string `json:"sessions"`
	Speakers []string `json:"speakers"`
	Phases   []string `json:"phases"` // phase keys, in page order
	Models   []string `json:"models"`
}

// facetValues bounds each list of SearchFacets.
const facetValues = "50"

// facetColumns are the columns of each facet, in the order of
// SearchFacets.
var facetColumns = []struct{ facet, column string }{
	{"tools", "tool_name"}, {"agents", "agent"}, {"sessions", "session_id"},
	{"speakers", "speaker"}, {"phases", "phase"}, {"models", "model"},
}

// selectSearchFacets reads the facets, one column at a time in branches
// the server runs side by side, each a GROUP BY of one metadata column,
// never content: rows (facet, value). topK reads the columns in one pass
// but took four times as long on 18.16. %[1]s is searchFacetsOfProject or
// "".
var selectSearchFacets = func() string {
	branches := make([]string, len(facetColumns))
	for i, c := range facetColumns {
		branches[i] = `
SELECT '` + c.facet + `' AS facet, CAST(v AS String) AS value
FROM (SELECT ` + c.column + ` AS v, count() AS n FROM conversations WHERE v != ''%[1]s GROUP BY v ORDER BY n DESC, v LIMIT ` + facetValues + `)`
	}
	return strings.Join(branches, "\nUNION ALL")
}()

const searchFacetsOfProject = ` AND project = ?`

// facetCache keeps each project's facets for facetsFresh: they change
// slowly, and reading them passes over six columns of every turn. It
// holds at most maxCachedFacets projects (the parameter is the user's).
type facetCache struct {
	mu    sync.Mutex
	known map[string]cachedFacets
}

type cachedFacets struct {
	facets SearchFacets
	read   time.Time
}

const (
	facetsFresh     = time.Minute
	maxCachedFacets = 64
)

// SearchFacets returns the facets of project's turns, of every project's
// when project is "", read at most facetsFresh ago.
func (s Store) SearchFacets(ctx context.Context, project string) (SearchFacets, error) {
	if s.facets == nil {
		return s.readFacets(ctx, project)
	}
	c := s.facets
	c.mu.Lock()
	got, ok := c.known[project]
	c.mu.Unlock()
	if ok && time.Since(got.read) < facetsFresh {
		return got.facets, nil
	}
	f, err, _ := s.flights.Do("facets\x00"+project, func() (any, error) { return s.readFacets(ctx, project) })
	if err != nil {
		return SearchFacets{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil || len(c.known) >= maxCachedFacets {
		c.known = map[string]cachedFacets{}
	}
	c.known[project] = cachedFacets{facets: f.(SearchFacets), read: time.Now()}
	return f.(SearchFacets), nil
}

// readFacets reads the facets of project, of every project when "".
func (s Store) readFacets(ctx context.Context, project string) (SearchFacets, error) {
	query, args := fmt.Sprintf(selectSearchFacets, ""), []any(nil)
	if project != "" {
		query = fmt.Sprintf(selectSearchFacets, searchFacetsOfProject)
		args = slices.Repeat([]any{project}, len(facetColumns))
	}
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return SearchFacets{}, fmt.Errorf("query search facets: %w", err)
	}
	defer rows.Close()
	f := SearchFacets{Tools: []string{}, Agents: []string{}, Sessions: []string{}, Speakers: []string{}, Models: []string{}}
	lists := map[string]*[]string{"tools": &f.Tools, "agents": &f.Agents, "sessions": &f.Sessions,
		"speakers": &f.Speakers, "phases": &f.Phases, "models": &f.Models}
	for rows.Next() {
		var facet, value string
		if err := rows.Scan(&facet, &value); err != nil {
			return SearchFacets{}, fmt.Errorf("scan search facet: %w", err)
		}
		if facet == "phases" {
			// Phases that differ only in case or spaces are one key.
			value = page.PhaseKey(value)
			if value == "" || slices.Contains(f.Phases, value) {
				continue
			}
		}
		*lists[facet] = append(*lists[facet], value)
	}
	if err := rows.Err(); err != nil {
		return SearchFacets{}, fmt.Errorf("read search facets: %w", err)
	}
	for _, l := range lists {
		slices.Sort(*l)
	}
	f.Phases = orEmpty(page.PhaseOrder(f.Phases))
	return f, nil
}
