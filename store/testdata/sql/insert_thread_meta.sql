INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns)
SELECT
    ?,
    if(?, ?, argMax(title, updated_ns)),
    if(?, ?, argMax(archived, updated_ns)),
    argMax(starred, updated_ns),
    greatest(?, max(updated_ns) + 1)
FROM thread_meta
WHERE thread_id = ?
-- $1 = th
-- $2 = 1
-- $3 = title
-- $4 = 0
-- $5 = 0
-- $6 = 9
-- $7 = th
