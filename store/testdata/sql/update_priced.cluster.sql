ALTER TABLE `conversations_local` UPDATE cost_usd = toNullable((
    if(ifNull(tokens_in, 0) >= ifNull(tokens_cache_read, 0) + ifNull(tokens_cache_write, 0),
         toFloat64(ifNull(tokens_in, 0)) - ifNull(tokens_cache_read, 0) - ifNull(tokens_cache_write, 0),
         toFloat64(ifNull(tokens_in, 0))) * ?
  + toFloat64(ifNull(tokens_cache_read, 0)) * ?
  + toFloat64(ifNull(tokens_cache_write, 0)) * ?
  + if(ifNull(tokens_reasoning, 0) <= ifNull(tokens_out, 0),
         toFloat64(ifNull(tokens_out, 0)) - ifNull(tokens_reasoning, 0),
         toFloat64(ifNull(tokens_out, 0))) * ?
  + toFloat64(ifNull(tokens_reasoning, 0)) * ?
  ) / 1000000), cost_source = 'priced'
WHERE ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?
  AND (? = '' OR project = ?)
  AND cost_source IN ('priced', 'unknown')
  AND has(?, model)
-- $1 = 1
-- $2 = 0
-- $3 = 0
-- $4 = 2
-- $5 = 0
-- $6 = 0
-- $7 = 1
-- $8 = 1
-- $9 = 2
-- $10 = 
-- $11 = 
-- $12 = [gpt-4o]
