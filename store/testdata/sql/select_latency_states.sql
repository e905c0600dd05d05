SELECT day, argMax(stale, computed_ns), max(computed_ns)
FROM latency_days
WHERE day >= ? AND day < ?
GROUP BY day
-- $1 = 1
-- $2 = 3
