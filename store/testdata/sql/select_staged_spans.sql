SELECT DISTINCT trace_id, span_id
FROM join_staging
WHERE trace_id IN (?) AND kind = ?
-- $1 = {[tr]}
-- $2 = 0
