SELECT thread_id, turn_id, max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id IN ?
GROUP BY thread_id, turn_id
-- $1 = {[th1 th2]}
