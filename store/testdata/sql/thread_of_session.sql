SELECT thread_id
FROM conversations
WHERE session_id = ?
ORDER BY start_ns DESC, revision DESC
LIMIT 1
-- $1 = s
