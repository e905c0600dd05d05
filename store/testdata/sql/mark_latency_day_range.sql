INSERT INTO latency_days (day, stale, computed_ns)
SELECT day, toUInt8(1), toUInt64(?)
FROM latency_days
WHERE day >= ? AND day <= ?
GROUP BY day
-- $1 = 3
-- $2 = 20000
-- $3 = 20001
