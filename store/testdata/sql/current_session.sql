SELECT session_id
FROM conversations
WHERE thread_id = ? AND session_id != '' AND (? = '' OR provider = ?)
  AND session_id NOT IN
  (
      SELECT attributes.value[indexOf(attributes.key, ?)]
      FROM conversations
      WHERE thread_id = ? AND has(attributes.key, ?)
  )
ORDER BY start_ns DESC, revision DESC
LIMIT 1
-- $1 = th
-- $2 = claude
-- $3 = claude
-- $4 = convtrace.session.rejected
-- $5 = th
-- $6 = convtrace.session.rejected
