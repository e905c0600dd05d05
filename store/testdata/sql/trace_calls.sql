SELECT span_id,
       any(parent_span_id) AS call_parent,
       anyIf(thread_id, thread_id != '') AS call_thread,
       anyIf(phase, phase != '') AS call_phase,
       anyIf(speaker, speaker != '') AS call_speaker,
       anyIf(agent, agent != '') AS call_agent,
       max(round) AS call_round,
       anyIf(operation, operation != '') AS call_operation,
       anyIf(provider, provider != '') AS call_provider,
       anyIf(model, model != '') AS call_model,
       min(start_ns) AS call_start,
       max(start_ns) AS call_end,
       count() AS call_turns,
       sum(tokens_in) AS call_in,
       sum(tokens_out) AS call_out,
       sum(cost_usd) AS call_cost,
       max(toUInt8((role IN ('response', 'tool_result', 'tool_result_error', 'error') OR status = 'error' OR duration_ns > 0))) AS call_ended,
       max(toUInt8(role = 'error' OR status = 'error')) AS call_failed,
       anyIf(error, error != '') AS call_error,
       max(ttft_ns) AS call_ttft,
       toUInt8(span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE (project, thread_id) IN (SELECT project, thread_id FROM trace_threads WHERE trace_id = ?)
      AND trace_id = ?
             AND greatest(start_ns, heartbeat_ns) >= ?
       )) AS call_alive
FROM
(
    SELECT turn_id, span_id, parent_span_id, thread_id, phase, speaker, agent, round, operation, provider, model,
           start_ns, tokens_in, tokens_out, cost_usd, role, status, duration_ns, error, ttft_ns
    FROM conversations
    WHERE (project, thread_id) IN (SELECT project, thread_id FROM trace_threads WHERE trace_id = ?)
      AND trace_id = ?
    ORDER BY turn_id, revision DESC
    LIMIT 1 BY turn_id
)
GROUP BY span_id
-- $1 = tr
-- $2 = tr
-- $3 = 9
-- $4 = tr
-- $5 = tr
