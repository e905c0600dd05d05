INSERT INTO latency_days (day, stale, computed_ns)
SELECT DISTINCT toUInt32(intDiv(start_ns, 86400000000000)), toUInt8(1), toUInt64(?)
FROM conversations
WHERE _part IN ?
-- $1 = 3
-- $2 = {[202611_1_1_0]}
