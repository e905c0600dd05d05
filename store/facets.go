package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convtrace/convtrace/store/page"
)

// PhaseCount is how many provider calls of a thread one phase holds,
// counted as its cost table counts them (tool runs are not calls), and
// those still running.
type PhaseCount struct {
	Key   string `json:"phase"` // lower case; "" for turns without a phase
	Name  string `json:"name"`  // as the page heads the phase
	Calls uint64 `json:"calls"`
}

// selectPhaseCounts counts a thread's calls per phase, in the order the
// phases first appear: every phase, and of internal calls only those
// asked for (the placeholder, 1 to count them, else 0), so that the
// chips list every phase but count what the page shows. A call counts
// by its prompt or by the row that ended it (providerCall).
const selectPhaseCounts = `
SELECT lowerUTF8(phase) AS phase_key, any(phase) AS phase_written,
       uniqExactIf(span_id, internal <= ? AND (role = 'prompt' OR ` + providerCall + `)) AS phase_calls,
       min(start_ns) AS first_ns
FROM conversations
WHERE thread_id = ?
GROUP BY phase_key
ORDER BY first_ns, phase_key`

// PhaseCounts returns the thread's phases in page order with their calls,
// internal ones counted only when withInternal.
func (s Store) PhaseCounts(ctx context.Context, threadID string, withInternal bool) ([]PhaseCount, error) {
	rows, err := s.db.Query(ctx, selectPhaseCounts, boolUInt8(withInternal), threadID)
	if err != nil {
		return nil, fmt.Errorf("query phase counts: %w", err)
	}
	defer rows.Close()
	byKey := map[string]PhaseCount{}
	var firstSeen []string
	for rows.Next() {
		var (
			c       PhaseCount
			written string
			first   uint64
		)
		if err := rows.Scan(&c.Key, &written, &c.Calls, &first); err != nil {
			return nil, fmt.Errorf("scan phase count: %w", err)
		}
		c.Key = strings.TrimSpace(c.Key)
		c.Name = page.PhaseName(c.Key, written)
		if prev, ok := byKey[c.Key]; ok { // phases differing only in spaces
			prev.Calls += c.Calls
			byKey[c.Key] = prev
			continue
		}
		byKey[c.Key] = c
		firstSeen = append(firstSeen, c.Key)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read phase counts: %w", err)
	}
	counts := make([]PhaseCount, 0, len(firstSeen))
	for _, key := range page.PhaseOrder(firstSeen) {
		counts = append(counts, byKey[key])
	}
	return counts, nil
}

// Facets are the values a thread's filters can choose from, each sorted.
type Facets struct {
	Roles    []string `json:"roles"`
	Speakers []string `json:"speakers"`
	Agents   []string `json:"agents"` // sub-agents; the main agent is ''
	Tools    []string `json:"tools"`
	Sessions []string `json:"sessions"`
}

const selectFacets = `
SELECT groupUniqArrayIf(role, role != '') AS roles, groupUniqArrayIf(speaker, speaker != '') AS speakers,
       groupUniqArrayIf(agent, agent != '') AS agents, groupUniqArrayIf(tool_name, tool_name != '') AS tools,
       groupUniqArrayIf(session_id, session_id != '') AS sessions
FROM conversations
WHERE thread_id = ?`

// selectTraces lists the traces of a thread in the order they started.
const selectTraces = `
SELECT trace_id, min(start_ns) AS first_ns
FROM conversations
WHERE thread_id = ? AND trace_id != ''
GROUP BY trace_id
ORDER BY first_ns, trace_id`

// Traces returns the ids of the Traces a thread's turns belong to.
func (s Store) Traces(ctx context.Context, threadID string) ([]string, error) {
	rows, err := s.db.Query(ctx, selectTraces, threadID)
	if err != nil {
		return nil, fmt.Errorf("query thread traces: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var (
			id    string
			first uint64
		)
		if err := rows.Scan(&id, &first); err != nil {
			return nil, fmt.Errorf("scan thread trace: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read thread traces: %w", err)
	}
	return ids, nil
}

// Facets returns the roles, speakers, agents, tools and sessions of a
// thread.
func (s Store) Facets(ctx context.Context, threadID string) (Facets, error) {
	rows, err := s.db.Query(ctx, selectFacets, threadID)
	if err != nil {
		return Facets{}, fmt.Errorf("query facets: %w", err)
	}
	defer rows.Close()
	var f Facets
	if rows.Next() {
		if err := rows.Scan(&f.Roles, &f.Speakers, &f.Agents, &f.Tools, &f.Sessions); err != nil {
			return Facets{}, fmt.Errorf("scan facets: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return Facets{}, fmt.Errorf("read facets: %w", err)
	}
	for _, vs := range []*[]string{&f.Roles, &f.Speakers, &f.Agents, &f.Tools, &f.Sessions} {
		*vs = orEmpty(*vs)
		slices.Sort(*vs)
	}
	return f, nil
}
