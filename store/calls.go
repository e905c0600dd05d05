package store

import (
	"context"
	"fmt"
	"slices"
)

// selectCallTurns reads the turns of {thread} that {filter} keeps, without
// their content: who said what, when, in which span, with usage and cost;
// enough to list and pair its calls. LIMIT 1 BY turn_id keeps the highest
// revision of a turn stored twice; {limit} turns, the newest.
const selectCallTurns = `
SELECT turn_id, span_id, parent_turn_id, thread_id, phase, speaker, agent, round, role, seq,
       provider, model, tool_name, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns
FROM conversations
WHERE thread_id = {thread}{filter}
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT {limit}`

// filterCallOf keeps the turns of the call {id} names in {thread}: the
// turn of that id, and the turns of its span; or the turns of the span of
// that id. A turn without a span is a call of its own.
const filterCallOf = `
  AND (turn_id = {id} OR (span_id != '' AND (span_id = {id} OR span_id IN
  (
      SELECT span_id
      FROM conversations
      WHERE thread_id = {thread} AND turn_id = {id}
  ))))`

// callTurns is selectCallTurns of the newest limit turns of a thread that
// are not internal.
func callTurns(threadID string, limit int) sqlText {
	return sqlf(selectCallTurns, holes{"thread": arg(threadID), "filter": raw(filterInternal), "limit": arg(uint64(limit))})
}

// callOf is selectCallTurns of the turns of the call id names.
func callOf(threadID, id string) sqlText {
	thread := arg(threadID)
	return sqlf(selectCallTurns, holes{"thread": thread, "limit": arg(uint64(maxCallTurns)),
		"filter": sqlf(filterCallOf, holes{"thread": thread, "id": arg(id)})})
}

// CallTurns returns the newest limit turns of a thread that are not
// internal, without their content, oldest first.
func (s Store) CallTurns(ctx context.Context, threadID string, limit int) ([]Turn, error) {
	return s.scanCallTurns(ctx, callTurns(threadID, limit))
}

// CallOf returns the turns, without their content, of the call that id
// names: a turn's id or a span's id. None when the thread has no such
// turn or span.
func (s Store) CallOf(ctx context.Context, threadID, id string) ([]Turn, error) {
	return s.scanCallTurns(ctx, callOf(threadID, id))
}

// maxCallTurns bounds the turns one call is read with: a span holds a
// prompt, its answer and a few tool or error rows.
const maxCallTurns = 1000

func (s Store) scanCallTurns(ctx context.Context, q sqlText) ([]Turn, error) {
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query call turns: %w", err)
	}
	defer rows.Close()
	turns := []Turn{}
	for rows.Next() {
		var t Turn
		err := rows.Scan(&t.TurnID, &t.SpanID, &t.ParentTurnID, &t.ThreadID, &t.Phase, &t.Speaker, &t.Agent,
			&t.Round, &t.Role, &t.Seq, &t.Provider, &t.Model, &t.ToolName, &t.TokensIn, &t.TokensOut, &t.CostUSD,
			&t.Status, &t.StartNS, &t.DurationNS)
		if err != nil {
			return nil, fmt.Errorf("scan call turn: %w", err)
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read call turns: %w", err)
	}
	slices.Reverse(turns)
	return turns, nil
}
