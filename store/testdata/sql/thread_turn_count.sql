SELECT count() FROM conversations WHERE thread_id = ?
-- $1 = th
