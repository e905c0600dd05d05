SELECT thread_id, thread_project, meta_title, meta_archived, meta_starred, meta_updated, thread_rows
FROM
(
    SELECT thread_id, any(project) AS thread_project, count() AS thread_rows
    FROM conversations
    WHERE thread_id != ''
  AND thread_id = ?
  AND project = ?
  AND ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT thread_id, argMax(title, updated_ns) AS meta_title, argMax(archived, updated_ns) AS meta_archived,
           argMax(starred, updated_ns) AS meta_starred, max(updated_ns) AS meta_updated
    FROM thread_meta
    GROUP BY thread_id
) AS m USING thread_id
ORDER BY thread_id
-- $1 = th
-- $2 = p
-- $3 = 0
-- $4 = 1
-- $5 = 1
-- $6 = 2
