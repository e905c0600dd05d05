INSERT INTO cost_days (day, stale, computed_ns)
SELECT arrayJoin(?) AS d, toUInt8(1), toUInt64(?)
-- $1 = [20000]
-- $2 = 3
