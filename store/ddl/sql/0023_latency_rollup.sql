-- Summaries of the latency report, one version per UTC day as the cost
-- summaries keep (0006), so that /api/latency reads thousands of rows
-- instead of every call of its range (store/latency_rollup.go). A day's
-- calls that started and ended that day are added up per project, model,
-- provider, phase and speaker in latency_daily, their durations and times
-- to first token kept as the quantilesExact states the report merges. The
-- calls that ended that day but started before it are latency_crossing,
-- one row each; the error rows of spans that do not end that day are
-- latency_errors, folded by span and sorted by it, so that the report
-- reads those of the calls it folds across days and no others.
-- latency_days says which version of a day is current, and which days are
-- stale, as cost_days does.
CREATE TABLE IF NOT EXISTS latency_daily
(
    project     {{lc "String"}},
    day         UInt32,
    computed_ns UInt64,
    model       {{lc "String"}},
    provider    {{lc "String"}},
    phase       {{lc "String"}},
    speaker     {{lc "String"}},
    calls       UInt64,
    failed      UInt64,
    duration    AggregateFunction(quantilesExact(0.5, 0.95, 0.99), UInt64),
    ttft_calls  UInt64,
    ttft        AggregateFunction(quantilesExactIf(0.5, 0.95, 0.99), UInt64, UInt8)
)
ENGINE = ReplacingMergeTree(computed_ns)
PARTITION BY intDiv(day, 32)
ORDER BY (project, day, computed_ns, model, provider, phase, speaker);
CREATE TABLE IF NOT EXISTS latency_crossing
(
    project     {{lc "String"}},
    day         UInt32,
    computed_ns UInt64,
    thread_id   String,
    trace_id    String,
    span_id     String,
    model       {{lc "String"}},
    provider    {{lc "String"}},
    phase       {{lc "String"}},
    speaker     {{lc "String"}},
    duration_ns UInt64,
    ttft_ns     UInt64,
    failed      UInt8
)
ENGINE = ReplacingMergeTree(computed_ns)
PARTITION BY intDiv(day, 32)
ORDER BY (project, day, computed_ns, trace_id, span_id);
CREATE TABLE IF NOT EXISTS latency_errors
(
    project     {{lc "String"}},
    day         UInt32,
    computed_ns UInt64,
    thread_id   String,
    trace_id    String,
    span_id     String,
    model       {{lc "String"}},
    provider    {{lc "String"}},
    phase       {{lc "String"}},
    speaker     {{lc "String"}},
    ttft_ns     UInt64
)
ENGINE = ReplacingMergeTree(computed_ns)
PARTITION BY intDiv(day, 32)
ORDER BY (trace_id, span_id, day, computed_ns)
SETTINGS index_granularity = 256;
CREATE TABLE IF NOT EXISTS latency_days
(
    day         UInt32,
    stale       UInt8,
    computed_ns UInt64
)
ENGINE = ReplacingMergeTree(computed_ns)
ORDER BY day
