-- Summaries of the cost report, one version per UTC day, so that
-- /api/cost reads thousands of rows instead of every turn of the range. The
-- viewer writes them (viewer/cost_rollup.go); they are a cache of
-- conversations FINAL and may be dropped at any time.
--
-- A version is the set of rows of one recompute, named by its computed_ns.
-- computed_ns is in every ORDER BY, so a merge never folds rows of two
-- versions together: a reader that picked a version reads all of it, even
-- while another recompute of the same day lands. One recompute inserts one
-- row per key (its SELECT groups by the key), so merges fold nothing: the
-- ReplacingMergeTree's version column never decides between rows, and a
-- version that lost to a newer one stays (never read) until the tables are
-- dropped.
--
-- day is the UTC day number (start_ns divided by 86400 s): no time zone.
CREATE TABLE IF NOT EXISTS cost_daily
(
    project            {{lc "String"}},
    day                UInt32,
    computed_ns        UInt64,
    model              {{lc "String"}},
    provider           {{lc "String"}},
    phase              {{lc "String"}},
    speaker            {{lc "String"}},
    agent              {{lc "String"}},
    calls              UInt64,
    tokens_in          Nullable(UInt64),
    tokens_out         Nullable(UInt64),
    tokens_cache_read  Nullable(UInt64),
    tokens_cache_write Nullable(UInt64),
    tokens_reasoning   Nullable(UInt64),
    cost_usd           Nullable(Float64),
    unpriced           UInt64
)
ENGINE = ReplacingMergeTree(computed_ns)
PARTITION BY intDiv(day, 32)
ORDER BY (project, day, computed_ns, model, provider, phase, speaker, agent);

-- The same sums per thread, for the report's most expensive threads.
CREATE TABLE IF NOT EXISTS cost_thread_daily
(
    project            {{lc "String"}},
    day                UInt32,
    computed_ns        UInt64,
    thread_id          String,
    calls              UInt64,
    tokens_in          Nullable(UInt64),
    tokens_out         Nullable(UInt64),
    tokens_cache_read  Nullable(UInt64),
    tokens_cache_write Nullable(UInt64),
    tokens_reasoning   Nullable(UInt64),
    cost_usd           Nullable(Float64),
    unpriced           UInt64
)
ENGINE = ReplacingMergeTree(computed_ns)
PARTITION BY intDiv(day, 32)
ORDER BY (project, day, computed_ns, thread_id);

-- Which version of a UTC day is current, and the fingerprint of
-- conversations it summarizes: the day's row count and sum of start_ns, over
-- every project, read without FINAL before the recompute. A day's version
-- covers all its projects: the fingerprint is read per day because grouping
-- ten million turns by project as well costs twice as much. The row with the
-- highest computed_ns wins. A reader uses a version only while the day's
-- fingerprint is still the same; turns = 0 marks a day invalidated by
-- convtrace reprice (a day with rows never counts 0).
CREATE TABLE IF NOT EXISTS cost_days
(
    day         UInt32,
    turns       UInt64,
    start_sum   UInt64,
    computed_ns UInt64
)
ENGINE = ReplacingMergeTree(computed_ns)
ORDER BY day
