SELECT any(phase) AS phase_name, min(start_ns) AS first_ns,
        count() AS calls,
        sum(tokens_in) AS sum_in,
        sum(tokens_out) AS sum_out,
        sum(tokens_cache_read) AS sum_cache_read,
        sum(tokens_cache_write) AS sum_cache_write,
        sum(tokens_reasoning) AS sum_reasoning,
        sum(cost_usd) AS sum_cost,
        countIf(cost_source = 'unknown') AS unpriced
FROM
(
    SELECT phase, start_ns, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning,
           cost_usd, cost_source, role
    FROM conversations
    WHERE thread_id = ?
    ORDER BY project, thread_id, start_ns, turn_id, revision DESC
    LIMIT 1 BY project, thread_id, start_ns, turn_id
) AS t
WHERE cost_source != '' AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error')
GROUP BY lowerUTF8(phase)
ORDER BY first_ns, phase_name
-- $1 = th
