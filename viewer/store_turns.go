package viewer

import (
	"context"
	"fmt"
)

// Turn is one row of conversations as the viewer shows it. Token counts and
// cost are nil when unknown (JSON null, shown as —).
type Turn struct {
	TurnID       string `json:"turn_id"`
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	ParentTurnID string `json:"parent_turn_id"`
	Project      string `json:"project"`
	ThreadID     string `json:"thread_id"`
	SessionID    string `json:"session_id"`
	Phase        string `json:"phase"`
	Speaker      string `json:"speaker"`
	Agent        string `json:"agent"`
	Round        uint16 `json:"round"`
	Role         string `json:"role"`
	Seq          uint16 `json:"seq"`
	Operation    string `json:"operation"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	ToolName     string `json:"tool_name"`
	ToolCallID   string `json:"tool_call_id"`
	Content      string `json:"content"`
	ContentBytes uint32 `json:"content_bytes"`
	Truncated    bool   `json:"truncated"`

	TokensIn         *uint32  `json:"tokens_in"`
	TokensOut        *uint32  `json:"tokens_out"`
	TokensCacheRead  *uint32  `json:"tokens_cache_read"`
	TokensCacheWrite *uint32  `json:"tokens_cache_write"`
	TokensReasoning  *uint32  `json:"tokens_reasoning"`
	CostUSD          *float64 `json:"cost_usd"`

	Status     string            `json:"status"`
	Error      string            `json:"error"`
	StartNS    uint64            `json:"start_ns"`
	DurationNS uint64            `json:"duration_ns"`
	Attributes map[string]string `json:"attributes"`

	// Running marks a prompt (or tool call) whose call has not ended: its
	// span has no response, tool result or error row yet.
	Running bool `json:"running"`
}

// TurnFilter narrows a thread's turns; an empty field does not filter.
type TurnFilter struct {
	Phase string // matched case-insensitively
	Role  string
}

// selectTurns reads a thread's turns in the order they were said. LIMIT 1
// BY turn_id keeps one copy of a turn delivered twice, merged or not.
//
// A call has ended when its span has an answer row (response, tool_result,
// error), a failed status, or a duration: only ended spans have one. Its
// prompt is running otherwise.
const selectTurns = `
SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       content, content_bytes, truncated,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd,
       status, error, start_ns, duration_ns, attributes.key, attributes.value,
       toUInt8(role IN ('prompt', 'tool_call') AND span_id NOT IN
       (
           SELECT span_id
           FROM conversations
           WHERE thread_id = ?
             AND (role IN ('response', 'tool_result', 'error') OR status = 'error' OR duration_ns > 0)
       )) AS running
FROM conversations
WHERE thread_id = ?`

// The filters are fixed SQL with bound values, appended when asked for.
const (
	filterPhase = `
  AND lowerUTF8(phase) = lowerUTF8(?)`
	filterRole = `
  AND role = ?`
	orderTurns = `
ORDER BY start_ns, seq, turn_id
LIMIT 1 BY turn_id`
)

// turns returns the thread's turns that pass f, sorted by start time, then
// seq. A thread without turns yields none, not an error.
func (s store) turns(ctx context.Context, threadID string, f TurnFilter) ([]Turn, error) {
	query, args := selectTurns, []any{threadID, threadID}
	if f.Phase != "" {
		query += filterPhase
		args = append(args, f.Phase)
	}
	if f.Role != "" {
		query += filterRole
		args = append(args, f.Role)
	}
	query += orderTurns

	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query turns: %w", err)
	}
	defer rows.Close()
	turns := []Turn{}
	for rows.Next() {
		var (
			t                  Turn
			truncated, running uint8
			attrKeys, attrVals []string
		)
		err := rows.Scan(&t.TurnID, &t.TraceID, &t.SpanID, &t.ParentSpanID, &t.ParentTurnID, &t.Project,
			&t.ThreadID, &t.SessionID, &t.Phase, &t.Speaker, &t.Agent, &t.Round, &t.Role, &t.Seq,
			&t.Operation, &t.Provider, &t.Model, &t.ToolName, &t.ToolCallID,
			&t.Content, &t.ContentBytes, &truncated,
			&t.TokensIn, &t.TokensOut, &t.TokensCacheRead, &t.TokensCacheWrite, &t.TokensReasoning, &t.CostUSD,
			&t.Status, &t.Error, &t.StartNS, &t.DurationNS, &attrKeys, &attrVals, &running)
		if err != nil {
			return nil, fmt.Errorf("scan turn: %w", err)
		}
		t.Truncated, t.Running = truncated != 0, running != 0
		t.Attributes = make(map[string]string, len(attrKeys))
		for i, k := range attrKeys {
			if i < len(attrVals) {
				t.Attributes[k] = attrVals[i]
			}
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	return turns, nil
}
