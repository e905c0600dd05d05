DELETE FROM thread_summary WHERE thread_id = ?;
-- $1 = th
