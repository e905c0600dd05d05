INSERT INTO join_staging (trace_id, span_id, record_id, kind, pos, received_ns, merged, payload)
