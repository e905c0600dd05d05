SELECT span_id, parent_span_id, name, kind, thread_id, phase, round, speaker, agent,
       start_ns, duration_ns, status, status_message, operation, provider, model,
       tokens_in, tokens_out, cost_usd
FROM spans
WHERE trace_id = ?
ORDER BY start_ns, span_id
LIMIT 1 BY span_id
-- $1 = tr
