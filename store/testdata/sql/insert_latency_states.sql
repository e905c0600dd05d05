INSERT INTO latency_days (day, stale, computed_ns)
SELECT arrayJoin(?), toUInt8(0), toUInt64(?)
-- $1 = [1 2]
-- $2 = 3
