SELECT DISTINCT project, thread_id
FROM conversations
WHERE start_ns >= ? AND start_ns < ? AND (? = '' OR project = ?)
-- $1 = 1
-- $2 = 2
-- $3 = p
-- $4 = p
