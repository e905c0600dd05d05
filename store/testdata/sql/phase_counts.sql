SELECT lowerUTF8(phase) AS phase_key, any(phase) AS phase_written, uniqExactIf(turn_id, internal <= ?) AS phase_turns,
       min(start_ns) AS first_ns
FROM conversations
WHERE thread_id = ?
GROUP BY phase_key
ORDER BY first_ns, phase_key
-- $1 = 0
-- $2 = th
