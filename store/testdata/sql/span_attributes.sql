SELECT arraySlice(attributes.key, 1, ?) AS attr_keys,
       arrayMap(v -> substringUTF8(v, 1, ?), arraySlice(attributes.value, 1, ?)) AS attr_values,
       length(attributes.key) AS attr_total,
       arraySlice(resource.key, 1, ?) AS res_keys,
       arrayMap(v -> substringUTF8(v, 1, ?), arraySlice(resource.value, 1, ?)) AS res_values,
       length(resource.key) AS res_total,
       arraySlice(events.name, 1, ?) AS event_names,
       arraySlice(events.time_ns, 1, ?) AS event_times,
       length(events.name) AS events_total,
       arrayExists((k, v) -> k = ? AND v = ?, attributes.key, attributes.value) AS content_in_turns
FROM spans
WHERE trace_id = ? AND span_id = ?
LIMIT 1
-- $1 = 1
-- $2 = 2
-- $3 = 1
-- $4 = 1
-- $5 = 2
-- $6 = 1
-- $7 = 1
-- $8 = 1
-- $9 = convtrace.content
-- $10 = turns
-- $11 = tr
-- $12 = sp
