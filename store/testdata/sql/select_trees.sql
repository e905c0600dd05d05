SELECT trace_id, span_id, parent_span_id, name, attributes.key, attributes.value, resource.key, resource.value
FROM spans
WHERE (project, trace_id) IN (?)
-- $1 = [p tr]
