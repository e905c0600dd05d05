SELECT day_number, cell_model AS model, cell_provider AS provider, cell_phase AS phase,
       cell_speaker AS speaker, cell_agent AS agent,
        sum(c_calls) AS calls, sum(c_in) AS sum_in, sum(c_out) AS sum_out, sum(c_cache_read) AS sum_cache_read,
        sum(c_cache_write) AS sum_cache_write, sum(c_reasoning) AS sum_reasoning, sum(c_cost) AS sum_cost,
        sum(c_unpriced) AS unpriced
FROM
(
    SELECT toUInt64(day) AS day_number, CAST(model AS String) AS cell_model, CAST(provider AS String) AS cell_provider,
           CAST(phase AS String) AS cell_phase, CAST(speaker AS String) AS cell_speaker, CAST(agent AS String) AS cell_agent,
        calls AS c_calls, tokens_in AS c_in, tokens_out AS c_out, tokens_cache_read AS c_cache_read,
        tokens_cache_write AS c_cache_write, tokens_reasoning AS c_reasoning, cost_usd AS c_cost, unpriced AS c_unpriced
    FROM cost_daily
WHERE day >= ? AND day < ? AND (? = '' OR project = ?)
  AND has(?, concat(toString(day), '/', toString(computed_ns)))
    UNION ALL
    SELECT intDiv(start_ns, 86400000000000) AS live_day, CAST(model AS String) AS live_model,
           CAST(provider AS String) AS live_provider, CAST(phase AS String) AS live_phase,
           CAST(speaker AS String) AS live_speaker, CAST(agent AS String) AS live_agent,
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
    GROUP BY live_day, model, provider, phase, speaker, agent
    UNION ALL
    SELECT intDiv(start_ns, 86400000000000) AS live_day, CAST(model AS String) AS live_model,
           CAST(provider AS String) AS live_provider, CAST(phase AS String) AS live_phase,
           CAST(speaker AS String) AS live_speaker, CAST(agent AS String) AS live_agent,
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
    GROUP BY live_day, model, provider, phase, speaker, agent
)
GROUP BY day_number, cell_model, cell_provider, cell_phase, cell_speaker, cell_agent
ORDER BY day_number, cell_model, cell_provider, cell_phase, cell_speaker, cell_agent
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
