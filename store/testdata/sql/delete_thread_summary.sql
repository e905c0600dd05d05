ALTER TABLE thread_summary DELETE WHERE thread_id = ?;
-- $1 = th
