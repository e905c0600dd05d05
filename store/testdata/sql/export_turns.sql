SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       content, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, ttft_ns, heartbeat_ns, attributes.key, attributes.value, revision
FROM conversations
WHERE thread_id = ? AND (start_ns > ? OR (start_ns = ? AND turn_id > ?))
ORDER BY start_ns, turn_id, revision DESC
LIMIT 1 BY turn_id
LIMIT ?
-- $1 = th
-- $2 = 1
-- $3 = 1
-- $4 = t
-- $5 = 100
