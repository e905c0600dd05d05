DELETE FROM conversations WHERE start_ns < ? AND (? = '' OR project = ?);
DELETE FROM spans WHERE start_ns < ? AND (? = '' OR project = ?);
DELETE FROM trace_threads WHERE start_ns < ? AND (? = '' OR project = ?);
DELETE FROM thread_traces WHERE start_ns < ? AND (? = '' OR project = ?);
-- $1 = 1700000000000000000
-- $2 = p
-- $3 = p
-- $4 = 1700000000000000000
-- $5 = p
-- $6 = p
-- $7 = 1700000000000000000
-- $8 = p
-- $9 = p
-- $10 = 1700000000000000000
-- $11 = p
-- $12 = p
