-- Where a trace's turns and a thread's spans are, by key: conversations is
-- sorted by thread and spans by trace, so a trace page would otherwise read
-- every turn's trace_id, and a thread's export every span's thread_id.
-- trace_threads holds, per trace, the (project, thread) of its turns;
-- thread_traces, per thread, the traces of the spans that name it. Each
-- row also carries the newest start of what it stands for (start_ns, ts),
-- so that a prune removes it with its rows and retention expires it with
-- them. A materialized view fills each on every insert into its table,
-- whoever inserts; the INSERTs at the end fill them with what was stored
-- before. Copies fold into the newest (ReplacingMergeTree by start_ns);
-- readers use them to find keys, then read the rows by them
-- (store/traces.go, store/export_spans.go).
CREATE TABLE IF NOT EXISTS trace_threads
(
    trace_id  String,
    project   {{lc "String"}},
    thread_id String,
    start_ns  UInt64,
    ts        DateTime
)
ENGINE = ReplacingMergeTree(start_ns)
PARTITION BY toYYYYMM(ts)
ORDER BY (trace_id, project, thread_id)
{{ttl "ts"}}
SETTINGS index_granularity = 1024;
CREATE MATERIALIZED VIEW IF NOT EXISTS trace_threads_mv TO trace_threads AS
SELECT trace_id, project, thread_id, start_ns, ts
FROM conversations;
CREATE TABLE IF NOT EXISTS thread_traces
(
    thread_id String,
    project   {{lc "String"}},
    trace_id  String,
    start_ns  UInt64,
    ts        DateTime
)
ENGINE = ReplacingMergeTree(start_ns)
PARTITION BY toYYYYMM(ts)
ORDER BY (thread_id, project, trace_id)
{{ttl "ts"}}
SETTINGS index_granularity = 1024;
CREATE MATERIALIZED VIEW IF NOT EXISTS thread_traces_mv TO thread_traces AS
SELECT thread_id, project, trace_id, start_ns, ts
FROM spans;
INSERT INTO trace_threads (trace_id, project, thread_id, start_ns, ts)
SELECT trace_id, project, thread_id, max(start_ns), toDateTime(intDiv(max(start_ns), 1000000000))
FROM conversations
GROUP BY trace_id, project, thread_id, toYYYYMM(ts);
INSERT INTO thread_traces (thread_id, project, trace_id, start_ns, ts)
SELECT thread_id, project, trace_id, max(start_ns), toDateTime(intDiv(max(start_ns), 1000000000))
FROM spans
GROUP BY thread_id, project, trace_id, toYYYYMM(ts)
