SELECT content, history
FROM conversations
WHERE thread_id = ? AND turn_id = ?
ORDER BY revision DESC
LIMIT 1
-- $1 = th
-- $2 = t
