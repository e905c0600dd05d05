DELETE FROM messages WHERE thread_id IN (SELECT thread_id FROM thread_shells WHERE scope = ? AND cutoff_ns = ?)
  AND thread_id NOT IN (SELECT thread_id FROM conversations);
-- $1 = p
-- $2 = 1700000000000000000
