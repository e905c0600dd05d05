SELECT DISTINCT project, thread_id
FROM conversations
WHERE _part IN ?
-- $1 = {[202611_1_1_0]}
