ALTER TABLE `conversations_local` UPDATE cost_usd = CAST(NULL AS Nullable(Float64)), cost_source = 'unknown'
WHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
  AND (? = '' OR project = ?)
  AND cost_source IN ('priced', 'unknown')
  AND has(?, model)
-- $1 = 0
-- $2 = 1
-- $3 = 1
-- $4 = 2
-- $5 = 
-- $6 = 
-- $7 = [mystery]
