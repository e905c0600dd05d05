-- Every span, LLM call or not, for the trace waterfall. Event content lives
-- in conversations; only the events' names and times are kept here. The
-- index has a mark every 1,024 rows, as conversations' (0001): a trace's
-- spans are read a granule in each part that may hold them. A database
-- created before keeps its 8,192.
CREATE TABLE IF NOT EXISTS spans
(
    trace_id       String,
    span_id        String,
    parent_span_id String,
    project        {{lc "String"}},
    thread_id      String,
    phase          {{lc "String"}},
    round          UInt16,
    speaker        {{lc "String"}},
    agent          {{lc "String"}},
    name           {{lc "String"}},
    kind           {{lc "String"}},
    start_ns       UInt64,
    duration_ns    UInt64,
    status         {{lc "String"}},
    status_message String,
    operation      {{lc "String"}},
    provider       {{lc "String"}},
    model          {{lc "String"}},
    tokens_in      Nullable(UInt32),
    tokens_out     Nullable(UInt32),
    cost_usd       Nullable(Float64),
    ts             DateTime DEFAULT toDateTime(intDiv(start_ns, 1000000000)),
    attributes     Nested(key String, value String),
    resource       Nested(key String, value String),
    events         Nested(name String, time_ns UInt64)
    {{- if .SkipIndexes}},
    INDEX idx_thread_id thread_id TYPE bloom_filter GRANULARITY 4
    {{- end}}
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (project, trace_id, start_ns, span_id)
{{ttl "ts"}}
SETTINGS index_granularity = 1024
