SELECT trace_id, span_id, sumIf(length(payload), kind != 2)
FROM join_staging
WHERE ts >= ?
GROUP BY trace_id, span_id
HAVING uniqExactIf(record_id, kind != 2) > maxIf(merged, kind = 2)
   AND (minIf(received_ns, kind != 2) <= ?
        OR (countIf(kind = 0) > 0 AND maxIf(received_ns, kind != 2) <= ?))
LIMIT ?
-- $1 = 1970-01-01 00:00:09 +0000 UTC
-- $2 = 1
-- $3 = 2
-- $4 = 10000
