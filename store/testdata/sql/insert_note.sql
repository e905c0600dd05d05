INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns)
SELECT
    ?,
    ?,
    if(?, ?, argMax(starred, updated_ns)),
    if(?, ?, argMax(memo, updated_ns)),
    greatest(?, max(updated_ns) + 1)
FROM turn_notes
WHERE thread_id = ? AND turn_id = ?
-- $1 = th
-- $2 = t
-- $3 = 1
-- $4 = 1
-- $5 = 0
-- $6 = 
-- $7 = 9
-- $8 = th
-- $9 = t
