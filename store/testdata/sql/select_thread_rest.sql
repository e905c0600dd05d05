SELECT
    (SELECT uniqExact(span_id) FROM spans WHERE thread_id = ?) AS thread_spans,
    (SELECT uniqExact(turn_id) FROM turn_notes WHERE thread_id = ?) AS thread_notes,
    (SELECT count() FROM thread_meta WHERE thread_id = ?) AS thread_metas,
    (SELECT count() FROM thread_summary WHERE thread_id = ?) AS thread_summaries
-- $1 = th
-- $2 = th
-- $3 = th
-- $4 = th
