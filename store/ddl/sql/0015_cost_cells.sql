-- Exact cost for SQL without FINAL: every call's usage summed per
-- project, UTC day, model, provider, phase, speaker and agent, each call
-- once. A past day whose summary is current (its newest cost_days row is
-- not stale) is read from cost_daily at that version: a few rows. Every
-- other day (today, a day not summarized yet, a day made stale by a late
-- or re-delivered turn) is read live from conversations, each turn once
-- (LIMIT 1 BY the sort key, as FINAL folds copies); PREWHERE reads the
-- ts column alone to skip the summarized days. The writer marks the days
-- of late turns stale before and after it inserts them, the viewer the
-- days of parts it has not seen, and serve brings stale days current in
-- the background (viewer/query/cost_rollup.go). README, "Query with SQL".
CREATE VIEW IF NOT EXISTS cost_cells AS
SELECT project, day, model, provider, phase, speaker, agent, calls, tokens_in, tokens_out,
       tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, unpriced
FROM cost_daily
WHERE (day, computed_ns) {{global}}IN
(
    SELECT day, max(computed_ns)
    FROM cost_days
    GROUP BY day
    HAVING argMax(stale, computed_ns) = 0
)
UNION ALL
SELECT project, toUInt32(intDiv(start_ns, 86400000000000)) AS live_day, model, provider, phase, speaker, agent,
       count() AS live_calls, sum(tokens_in) AS live_in, sum(tokens_out) AS live_out,
       sum(tokens_cache_read) AS live_cache_read, sum(tokens_cache_write) AS live_cache_write,
       sum(tokens_reasoning) AS live_reasoning, sum(cost_usd) AS live_cost,
       countIf(cost_source = 'unknown') AS live_unpriced
FROM
(
    SELECT project, thread_id, turn_id, start_ns, model, provider, phase, speaker, agent, tokens_in, tokens_out,
           tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source
    FROM conversations
    PREWHERE intDiv(toUInt32(ts), 86400) {{global}}NOT IN
    (
        SELECT day
        FROM cost_days
        GROUP BY day
        HAVING argMax(stale, computed_ns) = 0
    )
    WHERE cost_source != ''
    LIMIT 1 BY project, thread_id, start_ns, turn_id
)
GROUP BY project, live_day, model, provider, phase, speaker, agent
