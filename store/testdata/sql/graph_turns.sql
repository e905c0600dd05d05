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
ORDER BY start_ns, seq, turn_id
-- $1 = th
