SELECT DISTINCT partition FROM system.parts
WHERE database = currentDatabase() AND table = 'join_staging' AND active
