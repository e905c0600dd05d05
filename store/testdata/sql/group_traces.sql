SELECT DISTINCT thread_id, trace_id
FROM conversations
WHERE thread_id IN ?
-- $1 = {[th1 th2]}
