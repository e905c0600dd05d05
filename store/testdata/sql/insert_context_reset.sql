INSERT INTO conversations (turn_id, span_id, project, thread_id, phase, round, role, status, start_ns)
SELECT ?, ?, argMax(project, start_ns), ?, argMax(phase, start_ns), argMax(round, start_ns), ?, ?, ?
FROM conversations
WHERE thread_id = ?
HAVING count() > 0
-- $1 = sp:context_reset:0
-- $2 = sp
-- $3 = th
-- $4 = context_reset
-- $5 = ok
-- $6 = 9
-- $7 = th
