SELECT count()
FROM
(
    SELECT project, thread_id
    FROM conversations
    WHERE (? = '' OR project = ?)
    GROUP BY project, thread_id
    HAVING max(start_ns) < ?
)
-- $1 = p
-- $2 = p
-- $3 = 1700000000000000000
