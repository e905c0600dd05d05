DELETE FROM thread_meta WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
DELETE FROM thread_summary WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
DELETE FROM thread_shells WHERE thread_id IN ?
  AND thread_id NOT IN (SELECT thread_id FROM conversations WHERE thread_id IN ?);
-- $1 = {[th1 th2]}
-- $2 = {[th1 th2]}
-- $3 = {[th1 th2]}
-- $4 = {[th1 th2]}
-- $5 = {[th1 th2]}
-- $6 = {[th1 th2]}
