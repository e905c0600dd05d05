SELECT count(), max(start_ns)
FROM conversations
WHERE thread_id = ?
-- $1 = th
