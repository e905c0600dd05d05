package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A search without text on a modern server (chDB 26.x): the keys each
// filter keeps (status, starred across threads, agent, phase, project),
// the facets, and the start of a hit's content, as on 18.16.
func TestSearchFiltersOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, project, thread_id, phase, speaker, agent, role, tool_name, model, content, status, start_ns, duration_ns, heartbeat_ns) VALUES "
	fixtures := []string{
		cols + `('a:prompt:0', 'a', 'p', 'th1', 'Plan', 'planner', '', 'prompt', '', 'gpt', 'plan the release', 'ok', 1000, 0, 0),
		      ('a:response:1', 'a', 'p', 'th1', 'Plan', 'planner', '', 'response', '', 'gpt', 'done', 'ok', 2000, 1000, 0),
		      ('b:tool_call:0', 'b', 'p', 'th1', 'execute', 'worker', 'sub', 'tool_call', 'grep', 'gpt', 'grep -r TODO', 'ok', 3000, 0, 9000),
		      ('c:prompt:0', 'c', 'p', 'th2', 'execute', 'worker', '', 'prompt', '', 'claude', 'never answered', 'ok', 4000, 0, 0),
		      ('d:prompt:0', 'd', 'p', 'th2', 'review', 'critic', '', 'prompt', '', 'claude', 'review it', 'ok', 6000, 0, 0),
		      ('d:error:1', 'd', 'p', 'th2', 'review', 'critic', '', 'error', '', 'claude', 'overloaded', 'error', 7000, 500, 0),
		      ('e:prompt:0', 'e', 'q', 'th3', 'plan', 'other', '', 'prompt', '', 'gpt', 'elsewhere', 'ok', 8000, 0, 0),
		      ('e:response:1', 'e', 'q', 'th3', 'plan', 'other', '', 'response', '', 'gpt', 'there', 'ok', 8500, 500, 0)`,
		cols + `('a:response:1', 'a', 'p', 'th1', 'Plan', 'planner', '', 'response', '', 'gpt', 'done', 'ok', 2000, 1000, 0)`,
		inlineSQL(t, NoteChange{Starred: ptr(true)}.insert("th1", "a:response:1", 5)),
		inlineSQL(t, NoteChange{Starred: ptr(true)}.insert("th2", "d:error:1", 5)),
		inlineSQL(t, NoteChange{Starred: ptr(false)}.insert("th2", "d:error:1", 6)),
		inlineSQL(t, NoteChange{Starred: ptr(true)}.insert("th3", "e:prompt:0", 5)),
		// The summaries a running or interrupted call is looked for in.
		inlineSummaries(t, "p", []string{"th1", "th2"}, []uint64{0, 0}, []uint64{0, 0}),
		inlineSummaries(t, "q", []string{"th3"}, []uint64{0}, []uint64{0}),
	}
	const alive = uint64(5000) // b beats at 9000: running; c started at 4000: interrupted
	filters := []struct {
		f    SearchFilter
		want string
	}{
		{SearchFilter{}, "e:response:1 e:prompt:0 d:error:1 d:prompt:0 c:prompt:0 b:tool_call:0 a:response:1 a:prompt:0"},
		{SearchFilter{Status: "ok"}, "e:response:1 e:prompt:0 d:prompt:0 a:response:1 a:prompt:0"},
		{SearchFilter{Status: "error"}, "d:error:1"},
		{SearchFilter{Status: StatusRunning}, "b:tool_call:0"},
		{SearchFilter{Status: StatusInterrupted, Project: "p"}, "c:prompt:0"},
		{SearchFilter{TurnFilter: TurnFilter{Starred: true}}, "e:prompt:0 a:response:1"},
		{SearchFilter{TurnFilter: TurnFilter{Agent: AgentMain, Phases: []string{"execute"}}}, "c:prompt:0"},
		{SearchFilter{TurnFilter: TurnFilter{Role: "tool_call", Tool: "grep", Agent: "sub"}, Model: "gpt"}, "b:tool_call:0"},
		{SearchFilter{Project: "p", TurnFilter: TurnFilter{FromNS: 2000, ToNS: 6000}}, "d:prompt:0 c:prompt:0 b:tool_call:0 a:response:1"},
	}
	var queries []string
	for _, c := range filters {
		q, args := searchKeysQuery(c.f, searchMonthsUpTo, searchAny, alive, 197001)
		queries = append(queries, inline(t, q, append(append([]any{uint32(197001)}, args...), uint64(20))...))
	}
	queries = append(queries,
		inline(t, fmt.Sprintf(selectSearchFacets, searchFacetsOfProject), "p", "p", "p", "p", "p", "p"),
		inline(t, fmt.Sprintf(selectSearchHits, searchNoMatch), uint64(aroundBytesBefore), uint64(8), uint64(searchTextBytes),
			sqlLiteral("('p', 'th1', 1000, 'a:prompt:0')")))
	r := runModern(t, fixtures, queries).Results
	for i, c := range filters {
		var ids []string
		for _, row := range r[i].Rows {
			if id := fmt.Sprint(row["turn_id"]); !slices.Contains(ids, id) { // copies fold in Go
				ids = append(ids, id)
			}
		}
		if got := strings.Join(ids, " "); got != c.want {
			t.Errorf("keys of %+v = %s, want %s", c.f, got, c.want)
		}
	}
	facets := map[string][]string{}
	for _, row := range r[len(filters)].Rows {
		facet := fmt.Sprint(row["facet"])
		facets[facet] = append(facets[facet], fmt.Sprint(row["value"]))
	}
	for _, vs := range facets {
		slices.Sort(vs)
	}
	if got := fmt.Sprint(facets); got != "map[agents:[sub] models:[claude gpt] phases:[Plan execute review] speakers:[critic planner worker] tools:[grep]]" {
		t.Errorf("facets of p = %s", got)
	}
	if hit := r[len(filters)+1].Rows; len(hit) != 1 || hit[0]["around"] != "plan the" || fmt.Sprint(hit[0]["around_from"]) != "1" {
		t.Errorf("hit without text = %v, want its first 8 bytes from byte 1", hit)
	}
}
