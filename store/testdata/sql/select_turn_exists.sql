SELECT count() AS copies
FROM conversations
WHERE thread_id = ? AND turn_id = ?
-- $1 = th
-- $2 = t
