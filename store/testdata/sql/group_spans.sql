SELECT trace_id, span_id, parent_span_id, project, thread_id, phase, round, speaker, agent, name, kind,
       start_ns, duration_ns, status, status_message, operation, provider, model, tokens_in, tokens_out, cost_usd,
       attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns
FROM spans
WHERE trace_id IN (SELECT DISTINCT trace_id FROM conversations WHERE thread_id IN ?)
   OR trace_id IN (SELECT trace_id FROM thread_traces WHERE thread_id IN ?) AND thread_id IN ?
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id
-- $1 = {[th1 th2]}
-- $2 = {[th1 th2]}
-- $3 = {[th1 th2]}
