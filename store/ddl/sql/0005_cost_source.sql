-- Where each turn's cost_usd came from: 'provided' (the caller or provider
-- gave it), 'priced' (computed at ingest from the tokens and the price
-- table), 'unknown' (tokens known, model not priced: cost stays NULL), or ''
-- on a turn that carries no usage. The DEFAULT answers for rows written
-- before this column existed and for writers that leave it out: a cost
-- present is taken as provided, tokens without a cost as unknown.
ALTER TABLE conversations ADD COLUMN {{ifNotExists}}cost_source {{lc "String"}}
    DEFAULT multiIf(isNotNull(cost_usd), 'provided', isNotNull(tokens_in) OR isNotNull(tokens_out), 'unknown', '')
    AFTER cost_usd
