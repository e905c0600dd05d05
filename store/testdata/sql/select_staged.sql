SELECT trace_id, span_id, record_id, kind, pos, received_ns, merged, payload
FROM join_staging
WHERE (trace_id, span_id) IN (?)
ORDER BY received_ns, record_id
-- $1 = [{[tr sp]}]
