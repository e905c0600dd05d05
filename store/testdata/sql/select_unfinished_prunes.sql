SELECT scope, cutoff_ns, count()
FROM (
    SELECT *
    FROM thread_shells
    ORDER BY version DESC
    LIMIT 1 BY project, thread_id, cutoff_ns
) AS h
WHERE done = 0
GROUP BY scope, cutoff_ns
ORDER BY cutoff_ns
