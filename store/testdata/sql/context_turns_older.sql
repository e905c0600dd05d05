SELECT turn_id, role, seq, speaker, phase, content, start_ns, tokens_out, tokens_reasoning
FROM conversations
WHERE thread_id = ?
  AND role IN ('prompt', 'response', 'context_reset')
  AND internal = 0
  AND (start_ns < ? OR (start_ns = ? AND (seq < ? OR (seq = ? AND turn_id < ?))))
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT ?
-- $1 = th
-- $2 = 9
-- $3 = 9
-- $4 = 1
-- $5 = 1
-- $6 = t
-- $7 = 12
