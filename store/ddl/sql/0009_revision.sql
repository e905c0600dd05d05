-- When the collector writes a call's turns more than once, merging log
-- records that arrived later (see 0008_join_staging.sql), each copy keeps
-- the same sort key and carries the time of the records it was built
-- from: the copy with the highest revision holds every record, and
-- readers that fold copies with LIMIT 1 BY order by it. 0 on every other
-- row, written once.
ALTER TABLE conversations ADD COLUMN {{ifNotExists}}revision UInt64 DEFAULT 0
