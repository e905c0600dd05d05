SELECT thread_id, '' AS none, max(updated_ns) AS meta_updated
FROM thread_meta
WHERE thread_id IN ?
GROUP BY thread_id
-- $1 = {[th1 th2]}
