SELECT trace_id, span_id, parent_span_id, project, thread_id, phase, round, speaker, agent, name, kind,
       start_ns, duration_ns, status, status_message, operation, provider, model, tokens_in, tokens_out, cost_usd,
       attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns
FROM spans
WHERE trace_id IN ?
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id
-- $1 = {[tr]}
