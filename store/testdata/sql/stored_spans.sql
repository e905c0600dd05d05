SELECT DISTINCT trace_id, span_id
FROM spans
WHERE trace_id IN ? AND span_id IN ?
-- $1 = {[tr]}
-- $2 = {[sp]}
