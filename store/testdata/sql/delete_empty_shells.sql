ALTER TABLE thread_meta DELETE WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
ALTER TABLE thread_summary DELETE WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
ALTER TABLE thread_shells DELETE WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
-- $1 = {[th1 th2]}
-- $2 = {[th1 th2]}
-- $3 = {[th1 th2]}
-- $4 = {[th1 th2]}
-- $5 = {[th1 th2]}
-- $6 = {[th1 th2]}
