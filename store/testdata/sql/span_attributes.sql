SELECT arraySlice(attributes.key, 1, ?) AS attr_keys,
       arrayMap(v -> substringUTF8(v, 1, ?), arraySlice(attributes.value, 1, ?)) AS attr_values,
       length(attributes.key) AS attr_total,
       arraySlice(resource.key, 1, ?) AS res_keys,
       arrayMap(v -> substringUTF8(v, 1, ?), arraySlice(resource.value, 1, ?)) AS res_values,
       length(resource.key) AS res_total,
       arraySlice(events.name, 1, ?) AS event_names,
       arraySlice(events.time_ns, 1, ?) AS event_times,
       length(events.name) AS events_total,
       arrayExists((k, v) -> k = 'convtrace.content' AND v = 'turns', attributes.key, attributes.value) AS content_in_turns
FROM spans
WHERE trace_id = ? AND span_id = ?
LIMIT 1
-- $1 = 50
-- $2 = 1024
-- $3 = 50
-- $4 = 50
-- $5 = 1024
-- $6 = 50
-- $7 = 50
-- $8 = 50
-- $9 = tr
-- $10 = sp
