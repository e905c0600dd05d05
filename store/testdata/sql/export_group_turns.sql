SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       content, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, ttft_ns, heartbeat_ns, attributes.key, attributes.value, revision
FROM conversations
WHERE thread_id IN ?
ORDER BY thread_id, start_ns, turn_id, revision DESC
LIMIT 1 BY thread_id, turn_id
-- $1 = {[th1 th2]}
