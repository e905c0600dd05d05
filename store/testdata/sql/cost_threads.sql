SELECT thread_id, any(part_project) AS thread_project,
        sum(c_calls) AS calls, sum(c_in) AS sum_in, sum(c_out) AS sum_out, sum(c_cache_read) AS sum_cache_read,
        sum(c_cache_write) AS sum_cache_write, sum(c_reasoning) AS sum_reasoning, sum(c_cost) AS sum_cost,
        sum(c_unpriced) AS unpriced
FROM
(
    SELECT thread_id, CAST(project AS String) AS part_project,
        calls AS c_calls, tokens_in AS c_in, tokens_out AS c_out, tokens_cache_read AS c_cache_read,
        tokens_cache_write AS c_cache_write, tokens_reasoning AS c_reasoning, cost_usd AS c_cost, unpriced AS c_unpriced
    FROM cost_thread_daily
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
    UNION ALL
    SELECT thread_id, CAST(any(project) AS String) AS live_project,
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
        SELECT project, thread_id, turn_id, start_ns, model, provider, phase, speaker, agent, tokens_in, tokens_out,
               tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source
        FROM conversations
        PREWHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
        WHERE (? = '' OR project = ?)
          AND cost_source != '' AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error')
        LIMIT 1 BY project, thread_id, start_ns, turn_id
    )
    GROUP BY thread_id
    UNION ALL
    SELECT thread_id, CAST(any(project) AS String) AS live_project,
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
        SELECT project, thread_id, turn_id, start_ns, model, provider, phase, speaker, agent, tokens_in, tokens_out,
               tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source
        FROM conversations
        PREWHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
        WHERE (? = '' OR project = ?)
          AND cost_source != '' AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error')
        LIMIT 1 BY project, thread_id, start_ns, turn_id
    )
    GROUP BY thread_id
)
GROUP BY thread_id
ORDER BY sum_cost DESC, thread_id
LIMIT ?
-- $1 = 2
-- $2 = 3
-- $3 = p
-- $4 = p
-- $5 = [2/100]
-- $6 = 86400
-- $7 = 172801
-- $8 = 86400000000001
-- $9 = 172800000000000
-- $10 = p
-- $11 = p
-- $12 = 259200
-- $13 = 259201
-- $14 = 259200000000000
-- $15 = 259200000000001
-- $16 = p
-- $17 = p
-- $18 = 10
