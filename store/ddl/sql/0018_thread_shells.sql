-- What a prune removed of each thread (convtrace prune): the summary of the
-- turns it removed, as thread_summary sums turns, so that the threads list
-- still shows a thread whose turns are gone, with its counts before
-- pruning, and marks it pruned. One row per prune of a thread (the
-- cutoff before which it removed every turn); the list adds them to the
-- thread's live summary. done = 0 while the prune's rows are still being
-- removed; a prune run again finishes those first, so a thread's removed
-- turns are counted once; scope is the prune's --project ('' for all).
-- The row with the highest version wins.
CREATE TABLE IF NOT EXISTS thread_shells
(
    project           String,
    thread_id         String,
    cutoff_ns         UInt64,
    scope             String,
    pruned_ns         UInt64,
    version           UInt64,
    done              UInt8,
    removed_bytes     UInt64,
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
ENGINE = ReplacingMergeTree(version)
ORDER BY (project, thread_id, cutoff_ns)
