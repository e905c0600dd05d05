SELECT model, count() AS turns
FROM conversations FINAL
WHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
  AND (? = '' OR project = ?)
  AND cost_source IN ('priced', 'unknown')
GROUP BY model
ORDER BY model
-- $1 = 0
-- $2 = 4294967295
-- $3 = 1
-- $4 = 18446744073709551615
-- $5 = p
-- $6 = p
