-- What the threads list shows of each (project, thread), computed from
-- conversations FINAL so that a turn delivered twice counts once, with a
-- fingerprint of the raw rows it was computed from (rows_seen = count(),
-- rows_hash = sum(cityHash64(turn_id, start_ns)), read without FINAL and
-- before computing). The viewer recomputes a thread whose fingerprint no
-- longer matches; the row with the highest computed_ns wins. A row with
-- turns = 0 says the thread's rows are gone (TTL).
CREATE TABLE IF NOT EXISTS thread_summary
(
    project           String,
    thread_id         String,
    computed_ns       UInt64,
    rows_seen         UInt64,
    rows_hash         UInt64,
    providers         Array(String),
    last_ns           UInt64,
    turns             UInt64,
    tokens_in_sum     Nullable(UInt64),
    tokens_out_sum    Nullable(UInt64),
    cost_sum          Nullable(Float64),
    prompts           UInt64,
    first_prompt_ns   UInt64,
    first_prompt_seq  UInt16,
    first_prompt      String,
    responses         UInt64,
    last_response_ns  UInt64,
    last_response_seq UInt16,
    last_response     String,
    contents          UInt64,
    last_turn_ns      UInt64,
    last_turn_seq     UInt16,
    last_turn         String
)
ENGINE = ReplacingMergeTree(computed_ns)
ORDER BY (project, thread_id)
