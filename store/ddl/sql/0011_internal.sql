-- 1 on a turn a pipeline marked internal (convtrace.internal): kept in the
-- audit trail and found by search and SQL, but left out of a thread's
-- recent context and, unless asked for, of its page. 0 on every other
-- row.
ALTER TABLE conversations ADD COLUMN {{ifNotExists}}internal UInt8 DEFAULT 0 AFTER truncated
