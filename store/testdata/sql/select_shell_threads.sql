SELECT DISTINCT project, thread_id
FROM thread_shells
WHERE scope = ? AND cutoff_ns = ?
-- $1 = p
-- $2 = 1700000000000000000
