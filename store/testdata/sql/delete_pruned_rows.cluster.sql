ALTER TABLE `conversations_local` DELETE WHERE start_ns < ? AND (? = '' OR project = ?);
ALTER TABLE `spans_local` DELETE WHERE start_ns < ? AND (? = '' OR project = ?);
ALTER TABLE `trace_threads_local` DELETE WHERE start_ns < ? AND (? = '' OR project = ?);
ALTER TABLE `thread_traces_local` DELETE WHERE start_ns < ? AND (? = '' OR project = ?);
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
