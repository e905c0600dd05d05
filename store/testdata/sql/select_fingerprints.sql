SELECT project, thread_id, count() AS n, sum(cityHash64(turn_id, start_ns)) AS h, uniqExact(turn_id) AS u
FROM conversations
WHERE project = ? AND thread_id IN ?
GROUP BY project, thread_id
-- $1 = p
-- $2 = {[th]}
