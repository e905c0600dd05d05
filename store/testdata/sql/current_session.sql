SELECT session_id
FROM conversations
WHERE thread_id = ? AND session_id != '' AND (? = '' OR provider = ?)
ORDER BY start_ns DESC, revision DESC
LIMIT 1
-- $1 = th
-- $2 = claude
-- $3 = claude
