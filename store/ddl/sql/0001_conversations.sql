-- One row per turn: everything one agent said in one provider call, in the
-- order it was said. ReplacingMergeTree over the full sort key folds a turn
-- delivered twice (same deterministic turn_id) into one row. The index has
-- a mark every 1,024 rows, not 8,192: a thread page reads a granule in
-- each part that holds the thread, and at ten million turns 8,192 rows a
-- granule made that 5% of the table. A database created before keeps its
-- 8,192 (README, "Large databases", says how to move it).
CREATE TABLE IF NOT EXISTS conversations
(
    turn_id            String,
    trace_id           String,
    span_id            String,
    parent_span_id     String,
    parent_turn_id     String,
    project            {{lc "String"}},
    thread_id          String,
    session_id         String,
    phase              {{lc "String"}},
    speaker            {{lc "String"}},
    agent              {{lc "String"}},
    round              UInt16,
    role               {{lc "String"}},
    seq                UInt16,
    operation          {{lc "String"}},
    provider           {{lc "String"}},
    model              {{lc "String"}},
    tool_name          String,
    tool_call_id       String,
    content            String{{codec}},
    content_bytes      UInt32,
    truncated          UInt8,
    tokens_in          Nullable(UInt32),
    tokens_out         Nullable(UInt32),
    tokens_cache_read  Nullable(UInt32),
    tokens_cache_write Nullable(UInt32),
    tokens_reasoning   Nullable(UInt32),
    cost_usd           Nullable(Float64),
    status             {{lc "String"}},
    error              String{{codec}},
    start_ns           UInt64,
    duration_ns        UInt64,
    ts                 DateTime DEFAULT toDateTime(intDiv(start_ns, 1000000000)),
    attributes         Nested(key String, value String)
    {{- if .SkipIndexes}},
    INDEX idx_trace_id trace_id TYPE bloom_filter GRANULARITY 4,
    INDEX idx_turn_id turn_id TYPE bloom_filter GRANULARITY 4
    {{- end}}
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (project, thread_id, start_ns, turn_id)
{{ttl "ts"}}
SETTINGS index_granularity = 1024
