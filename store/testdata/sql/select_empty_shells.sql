SELECT thread_id
FROM
(
    SELECT thread_id, cutoff_ns, argMax(done, version) AS is_done, argMax(pruned_ns, version) AS at
    FROM thread_shells
    WHERE (? = '' OR project = ?)
    GROUP BY thread_id, cutoff_ns
)
GROUP BY thread_id
HAVING min(is_done) = 1 AND max(at) < ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations)
ORDER BY thread_id
-- $1 = p
-- $2 = p
-- $3 = 9
