-- A day's cost summaries are current until a change marks them stale: the
-- parts of conversations inserted since touch the day, or convtrace
-- reprice rewrote its costs (viewer/query/cost_rollup.go). A state with
-- stale = 1 and the highest computed_ns says the day must be recomputed.
-- turns and start_sum, the fingerprint the viewer once compared, are no
-- longer read.
ALTER TABLE cost_days ADD COLUMN {{ifNotExists}}stale UInt8 DEFAULT 0
