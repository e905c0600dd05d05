package query

import (
	"context"
	"fmt"
	"slices"
)

// SearchFacets are the values the search's filters offer: of each column,
// the most frequent across the project's turns (every project's when none
// is given), at most facetValues of them. A filter takes any value; these
// are what the form suggests.
type SearchFacets struct {
	Tools    []string `json:"tools"`
	Agents   []string `json:"agents"` // sub-agents; the main agent is AgentMain
	Sessions []string `json:"sessions"`
	Speakers []string `json:"speakers"`
	Phases   []string `json:"phases"` // phase keys, in page order
	Models   []string `json:"models"`
}

// facetValues bounds each list of SearchFacets: topK's parameter, a
// literal in the SQL.
const facetValues = "50"

// selectSearchFacets reads the facets in one pass over six metadata
// columns, never content: topK keeps a bounded table of counts per column
// (approximate for the rarest values, which only decides which of them
// make the list). %s is searchFacetsOfProject or "".
const selectSearchFacets = `
SELECT topKIf(` + facetValues + `)(tool_name, tool_name != '') AS tools,
       topKIf(` + facetValues + `)(agent, agent != '') AS agents,
       topKIf(` + facetValues + `)(session_id, session_id != '') AS sessions,
       topKIf(` + facetValues + `)(speaker, speaker != '') AS speakers,
       topKIf(` + facetValues + `)(lowerUTF8(phase), phase != '') AS phases,
       topKIf(` + facetValues + `)(model, model != '') AS models
FROM conversations%s`

const searchFacetsOfProject = `
WHERE project = ?`

// SearchFacets returns the facets of project's turns, of every project's
// when project is "".
func (s Store) SearchFacets(ctx context.Context, project string) (SearchFacets, error) {
	query, args := fmt.Sprintf(selectSearchFacets, ""), []any(nil)
	if project != "" {
		query, args = fmt.Sprintf(selectSearchFacets, searchFacetsOfProject), []any{project}
	}
	var f SearchFacets
	lists := []*[]string{&f.Tools, &f.Agents, &f.Sessions, &f.Speakers, &f.Phases, &f.Models}
	dest := make([]any, len(lists))
	for i, l := range lists {
		dest[i] = l
	}
	if err := queryRow(ctx, s.db, query, args, dest...); err != nil {
		return SearchFacets{}, fmt.Errorf("query search facets: %w", err)
	}
	for _, l := range lists {
		*l = orEmpty(*l)
		slices.Sort(*l)
	}
	// Phases that differ only in spaces are one key (PhaseKey).
	var phases []string
	for _, p := range f.Phases {
		if key := PhaseKey(p); key != "" && !slices.Contains(phases, key) {
			phases = append(phases, key)
		}
	}
	f.Phases = orEmpty(PhaseOrder(phases))
	return f, nil
}
