SELECT thread_id, max(updated_ns) AS at,
       argMax(title, updated_ns) AS now_title, argMax(archived, updated_ns) AS now_archived,
       argMaxIf(title, updated_ns, updated_ns <= ?) AS was_title,
       argMaxIf(archived, updated_ns, updated_ns <= ?) AS was_archived
FROM thread_meta
WHERE thread_id IN (SELECT thread_id FROM thread_meta WHERE updated_ns > ?)
GROUP BY thread_id
ORDER BY at, thread_id
LIMIT ?
-- $1 = 7
-- $2 = 7
-- $3 = 7
-- $4 = 500
