SELECT turn_id, span_id, parent_turn_id, thread_id, phase, speaker, agent, round, role, seq,
       provider, model, tool_name, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns
FROM conversations
WHERE thread_id = ?
  AND (turn_id = ? OR (span_id != '' AND (span_id = ? OR span_id IN
  (
      SELECT span_id
      FROM conversations
      WHERE thread_id = ? AND turn_id = ?
  ))))
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT ?
-- $1 = th
-- $2 = a:prompt:0
-- $3 = a:prompt:0
-- $4 = th
-- $5 = a:prompt:0
-- $6 = 1000
