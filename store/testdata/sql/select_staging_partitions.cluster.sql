SELECT DISTINCT partition FROM cluster('c', system, parts)
WHERE database = 'convtrace' AND table = 'join_staging_local' AND active
