-- When the process recording a call last said the call was alive: set on
-- the prompt rows stored while the call runs, and on their refreshes (same
-- turn_id and sort key, so they fold); 0 on every other row. The viewer
-- shows a call with no answer and no start or heartbeat for a while as
-- interrupted rather than running.
ALTER TABLE conversations ADD COLUMN {{ifNotExists}}heartbeat_ns UInt64 DEFAULT 0 AFTER duration_ns
