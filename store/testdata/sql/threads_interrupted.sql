SELECT thread_id, thread_project, thread_providers, thread_last_ns, turn_count, sum_in, sum_out, cost_total,
       meta_title, meta_archived, thread_first_prompt, thread_last_response, thread_last_turn, pruned_turns, pruned_ns,
       thread_first_ns, failed_total, open_total, thread_alive_ns, thread_attr_keys, thread_attr_values
FROM
(
    SELECT
        thread_id,
        any(project) AS thread_project,
        groupUniqArrayArray(providers) AS thread_providers,
        max(last_ns) AS thread_last_ns,
        sum(turns) AS turn_count,
        sum(tokens_in_sum) AS sum_in,
        sum(tokens_out_sum) AS sum_out,
        sum(cost_sum) AS cost_total,
        argMinIf(first_prompt, (first_prompt_ns, first_prompt_seq), prompts > 0) AS thread_first_prompt,
        argMaxIf(last_response, (last_response_ns, last_response_seq), responses > 0) AS thread_last_response,
        argMaxIf(last_turn, (last_turn_ns, last_turn_seq), contents > 0) AS thread_last_turn,
        sum(shell_turns) AS pruned_turns,
        max(shell_ns) AS pruned_ns,
        min(first_ns) AS thread_first_ns,
        sum(failed_calls) AS failed_total,
        sumIf(open_calls, shell_ns = 0) AS open_total,
        max(alive_ns) AS thread_alive_ns,
        groupArrayArray(attr_keys) AS all_attr_keys,
        groupArrayArray(attr_values) AS all_attr_values,
        groupArrayArray(attr_ns) AS all_attr_ns,
        arrayReverseSort((k, n, i) -> (n, i), all_attr_keys, all_attr_ns, arrayEnumerate(all_attr_ns)) AS newest_attr_keys,
        arrayReverseSort((v, n, i) -> (n, i), all_attr_values, all_attr_ns, arrayEnumerate(all_attr_ns)) AS newest_attr_values,
        arrayFilter((k, u) -> u = 1, newest_attr_keys, arrayEnumerateUniq(newest_attr_keys)) AS thread_attr_keys,
        arrayFilter((v, u) -> u = 1, newest_attr_values, arrayEnumerateUniq(newest_attr_keys)) AS thread_attr_values
    FROM (
    SELECT project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns, toUInt64(0) AS shell_turns, toUInt64(0) AS shell_ns
    FROM
    (
        SELECT *
        FROM thread_summary
        WHERE 1
        ORDER BY computed_ns DESC
        LIMIT 1 BY project, thread_id
    ) AS l
    UNION ALL
    SELECT project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns, turns AS shell_turns, pruned_ns AS shell_ns
    FROM
    (
        SELECT *
        FROM thread_shells
        WHERE 1
        ORDER BY version DESC
        LIMIT 1 BY project, thread_id, cutoff_ns
    ) AS h
    WHERE done = 1
) AS s
    WHERE turns > 0
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT
        thread_id,
        argMax(title, updated_ns) AS meta_title,
        argMax(archived, updated_ns) AS meta_archived
    FROM thread_meta
    GROUP BY thread_id
) AS m USING thread_id
WHERE meta_archived = ?
  AND open_total > 0 AND thread_alive_ns < ?
ORDER BY thread_last_ns DESC, thread_id
LIMIT ?
-- $1 = 0
-- $2 = 4
-- $3 = 51
