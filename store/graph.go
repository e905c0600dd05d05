package store

import (
	"context"
	"fmt"
)

// GraphTurn is what the agent graph reads of one turn: who said it, in
// which call and phase, what it answers, which tool it ran and what it
// cost; never its content.
type GraphTurn struct {
	TurnID       string   `json:"turn_id"`
	SpanID       string   `json:"span_id"`
	ParentTurnID string   `json:"parent_turn_id"`
	Speaker      string   `json:"speaker"`
	Agent        string   `json:"agent"`
	Model        string   `json:"model"`
	Role         string   `json:"role"`
	Phase        string   `json:"phase"`
	ToolName     string   `json:"tool_name"`
	CostUSD      *float64 `json:"cost_usd"`
	StartNS      uint64   `json:"start_ns"`
}

// selectGraphTurns reads the few columns the graph needs of a thread's
// turns, each turn once: the copy with the highest revision, which holds
// the most. Internal turns are left out after the fold, as the thread page
// leaves them out, so that a node's calls are those its link shows.
const selectGraphTurns = `
SELECT turn_id, span_id, parent_turn_id, speaker, agent, model, role, phase, tool_name, cost_usd, start_ns
FROM
(
    SELECT turn_id, span_id, parent_turn_id, speaker, agent, model, role, phase, tool_name, cost_usd,
           start_ns, seq, internal
    FROM conversations
    WHERE thread_id = ?
    ORDER BY turn_id, revision DESC
    LIMIT 1 BY turn_id
)
WHERE internal = 0
ORDER BY start_ns, seq, turn_id`

// GraphTurns returns the turns of a thread the agent graph is drawn from,
// in the order they started; none when the thread has none.
func (s Store) GraphTurns(ctx context.Context, threadID string) ([]GraphTurn, error) {
	rows, err := s.db.Query(ctx, selectGraphTurns, threadID)
	if err != nil {
		return nil, fmt.Errorf("query graph turns: %w", err)
	}
	defer rows.Close()
	var turns []GraphTurn
	for rows.Next() {
		var t GraphTurn
		err := rows.Scan(&t.TurnID, &t.SpanID, &t.ParentTurnID, &t.Speaker, &t.Agent, &t.Model,
			&t.Role, &t.Phase, &t.ToolName, &t.CostUSD, &t.StartNS)
		if err != nil {
			return nil, fmt.Errorf("scan graph turn: %w", err)
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read graph turns: %w", err)
	}
	return turns, nil
}
