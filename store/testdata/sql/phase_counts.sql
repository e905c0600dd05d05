SELECT lowerUTF8(phase) AS phase_key, any(phase) AS phase_written,
       uniqExactIf(span_id, internal <= ? AND (role = 'prompt' OR cost_source != '' AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error'))) AS phase_calls,
       min(start_ns) AS first_ns
FROM conversations
WHERE thread_id = ?
GROUP BY phase_key
ORDER BY first_ns, phase_key
-- $1 = 0
-- $2 = th
