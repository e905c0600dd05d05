SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       substring(content, 1, ?) AS content_prefix, length(content) AS stored_bytes, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, ttft_ns,
       arraySlice(attributes.key, 1, 50) AS attr_keys,
       arrayMap(v -> substringUTF8(v, 1, 1024), arraySlice(attributes.value, 1, 50)) AS attr_values,
       length(attributes.key) AS attr_total,
       multiIf(role NOT IN ('prompt', 'tool_call') OR span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE thread_id = ?
             AND (role IN ('response', 'tool_result', 'tool_result_error', 'error') OR status = 'error' OR duration_ns > 0)
       ), 0, span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE thread_id = ?
             AND greatest(start_ns, heartbeat_ns) >= ?
       ), 1, 2) AS call_state
FROM conversations
WHERE thread_id = ?
  AND role = ?
  AND internal = 0
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT ?
-- $1 = 16384
-- $2 = th
-- $3 = th
-- $4 = 5000
-- $5 = th
-- $6 = prompt
-- $7 = 1000
