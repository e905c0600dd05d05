SELECT count() AS found
FROM
(
    SELECT 1
    FROM conversations
    WHERE thread_id = ?
    LIMIT 1
)
-- $1 = th
