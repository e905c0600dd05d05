ALTER TABLE `thread_summary_local` DELETE WHERE thread_id = ?;
-- $1 = th
