SELECT
    (SELECT max(computed_ns) FROM thread_summary) AS summary_ns,
    (SELECT max(updated_ns) FROM thread_meta) AS meta_ns
