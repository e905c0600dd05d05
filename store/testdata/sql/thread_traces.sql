SELECT trace_id, min(start_ns) AS first_ns
FROM conversations
WHERE thread_id = ? AND trace_id != ''
GROUP BY trace_id
ORDER BY first_ns, trace_id
-- $1 = th
