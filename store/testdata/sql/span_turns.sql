SELECT turn_id, thread_id, role, seq, speaker, phase, model, tool_name, status, error,
       start_ns, duration_ns, tokens_in, tokens_out, cost_usd,
       substringUTF8(content, 1, ?) AS content_head,
       toUInt8(length(content) > length(content_head) OR truncated != 0) AS content_cut,
       content_bytes, history
FROM conversations
WHERE (project, thread_id) IN (SELECT project, thread_id FROM trace_threads WHERE trace_id = ?)
      AND trace_id = ? AND span_id = ?
ORDER BY start_ns, seq, turn_id, revision DESC
LIMIT 1 BY turn_id
-- $1 = 2000
-- $2 = tr
-- $3 = tr
-- $4 = sp
