SELECT thread_id,
       argMax(session_id, (start_ns, revision)) AS now_session,
       argMaxIf(session_id, (start_ns, revision), start_ns <= arrayElement(?, indexOf(?, thread_id))) AS was_session
FROM conversations
WHERE project IN ? AND thread_id IN ? AND session_id != ''
GROUP BY thread_id
-- $1 = [5 0]
-- $2 = [th1 th2]
-- $3 = {[p]}
-- $4 = {[th1 th2]}
