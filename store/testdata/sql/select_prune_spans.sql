SELECT uniqExact(span_id) FROM spans WHERE start_ns < ? AND (? = '' OR project = ?)
-- $1 = 1700000000000000000
-- $2 = p
-- $3 = p
