SELECT uniqExact(cityHash64(project, thread_id)), uniqExact(cityHash64(turn_id)), sum(length(content))
FROM conversations
WHERE start_ns < ? AND (? = '' OR project = ?)
-- $1 = 1700000000000000000
-- $2 = p
-- $3 = p
