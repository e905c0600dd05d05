-- What a user changes about a thread (title, archived, starred). Kept out of
-- the append-only tables; the row with the highest updated_ns wins.
CREATE TABLE IF NOT EXISTS thread_meta
(
    thread_id  String,
    title      String,
    archived   UInt8,
    starred    UInt8,
    updated_ns UInt64
)
ENGINE = ReplacingMergeTree(updated_ns)
ORDER BY thread_id
