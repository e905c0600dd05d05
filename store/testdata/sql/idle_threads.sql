SELECT thread_id, argMin(project, start_ns) AS first_project, max(start_ns) AS last_start
FROM conversations
GROUP BY thread_id
HAVING (? = '' OR countIf(project = ?) > 0) AND last_start < ?
ORDER BY thread_id
-- $1 = p
-- $2 = p
-- $3 = 9
