INSERT INTO thread_shells (project, thread_id, cutoff_ns, scope, pruned_ns, version, done, removed_bytes, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns)
SELECT project, thread_id, cutoff_ns, scope, pruned_ns, ?, 1, removed_bytes, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns
FROM (
    SELECT *
    FROM thread_shells
    ORDER BY version DESC
    LIMIT 1 BY project, thread_id, cutoff_ns
) AS h
WHERE done = 0 AND scope = ? AND cutoff_ns = ?
-- $1 = 2
-- $2 = p
-- $3 = 1700000000000000000
