SELECT thread_id FROM conversations WHERE project = ? LIMIT 1
-- $1 = demo
