SELECT DISTINCT thread_id, turn_id
FROM conversations
WHERE thread_id IN ? AND turn_id IN ?
-- $1 = {[th1 th2]}
-- $2 = {[t]}
