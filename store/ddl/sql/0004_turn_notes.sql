-- A user's star and memo (at most 8000 characters) on one turn; the row with
-- the highest updated_ns wins.
CREATE TABLE IF NOT EXISTS turn_notes
(
    thread_id  String,
    turn_id    String,
    starred    UInt8,
    memo       String,
    updated_ns UInt64
)
ENGINE = ReplacingMergeTree(updated_ns)
ORDER BY (thread_id, turn_id)
