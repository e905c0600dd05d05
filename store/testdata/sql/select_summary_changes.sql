SELECT project, thread_id, max(computed_ns) AS at,
       argMax(turns, computed_ns) AS now_turns, argMax(last_ns, computed_ns) AS now_last,
       argMaxIf(turns, computed_ns, computed_ns <= ?) AS was_turns,
       argMaxIf(last_ns, computed_ns, computed_ns <= ?) AS was_last
FROM thread_summary
WHERE (project, thread_id) IN (SELECT project, thread_id FROM thread_summary WHERE computed_ns > ?)
GROUP BY project, thread_id
ORDER BY at, project, thread_id
LIMIT ?
-- $1 = 7
-- $2 = 7
-- $3 = 7
-- $4 = 500
