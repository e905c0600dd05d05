SELECT count() AS found
FROM
(
    SELECT 1 FROM spans WHERE trace_id = ? LIMIT 1
    UNION ALL
    SELECT 1 FROM conversations WHERE (project, thread_id) IN (SELECT project, thread_id FROM trace_threads WHERE trace_id = ?)
      AND trace_id = ? LIMIT 1
)
-- $1 = tr
-- $2 = tr
-- $3 = tr
