SELECT id, message
FROM messages
WHERE thread_id = ? AND id IN ?
LIMIT 1 BY id
-- $1 = th
-- $2 = {[m1]}
