-- How many rows beyond one per turn each (project, day, thread) of
-- cost_thread_daily held when it was summarized from the rows as they
-- are (0 when it was summarized with copies folded): the cold cost report
-- learns from it which days to fold, instead of a pass of its own over
-- the turns (viewer/query/cost_recompute.go).
ALTER TABLE cost_thread_daily ADD COLUMN {{ifNotExists}}copies UInt64 DEFAULT 0
