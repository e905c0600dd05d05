SELECT uniqExact(turn_id), sum(length(content)), min(start_ns), max(start_ns)
FROM conversations
WHERE thread_id = ?
-- $1 = th
