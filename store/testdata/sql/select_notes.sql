SELECT turn_id, argMax(starred, updated_ns) AS note_starred, argMax(memo, updated_ns) AS note_memo,
       max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id = ?
GROUP BY turn_id
ORDER BY turn_id
-- $1 = th
