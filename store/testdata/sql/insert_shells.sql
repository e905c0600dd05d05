INSERT INTO thread_shells (scope, cutoff_ns, pruned_ns, version, done, removed_bytes, project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns)
SELECT ?, ?, ?, ?, 0, removed_bytes, project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns
FROM (
SELECT *
FROM
(
    SELECT
        project,
        thread_id,
        groupUniqArrayIf(provider, provider != '') AS providers,
        max(start_ns) AS last_ns,
        count() AS turns,
        sum(tokens_in) AS tokens_in_sum,
        sum(tokens_out) AS tokens_out_sum,
        sum(cost_usd) AS cost_sum,
        countIf(role = 'prompt') AS prompts,
        argMinIf(start_ns, (start_ns, seq), role = 'prompt') AS first_prompt_ns,
        argMinIf(seq, (start_ns, seq), role = 'prompt') AS first_prompt_seq,
        substringUTF8(argMinIf(substring(content, 1, 8000), (start_ns, seq), role = 'prompt'), 1, 2000) AS first_prompt,
        countIf(role = 'response' AND content != '') AS responses,
        argMaxIf(start_ns, (start_ns, seq), role = 'response' AND content != '') AS last_response_ns,
        argMaxIf(seq, (start_ns, seq), role = 'response' AND content != '') AS last_response_seq,
        substringUTF8(argMaxIf(substring(content, 1, 8000), (start_ns, seq), role = 'response' AND content != ''), 1, 2000) AS last_response,
        countIf(content != '') AS contents,
        argMaxIf(start_ns, (start_ns, seq), content != '') AS last_turn_ns,
        argMaxIf(seq, (start_ns, seq), content != '') AS last_turn_seq,
        substringUTF8(argMaxIf(substring(content, 1, 8000), (start_ns, seq), content != ''), 1, 2000) AS last_turn,
        min(start_ns) AS first_ns,
        uniqExactIf(cityHash64(span_id), role = 'error' OR status = 'error') AS failed_calls,
        toUInt64(uniqExactIf(cityHash64(span_id), role IN ('prompt', 'tool_call') OR (role IN ('response', 'tool_result', 'tool_result_error', 'error') OR status = 'error' OR duration_ns > 0))
            - uniqExactIf(cityHash64(span_id), (role IN ('response', 'tool_result', 'tool_result_error', 'error') OR status = 'error' OR duration_ns > 0))) AS open_calls,
        greatest(max(start_ns), max(heartbeat_ns)) AS alive_ns,
        sum(length(content)) AS removed_bytes
    FROM 
(
    SELECT project, thread_id, turn_id, span_id, provider, start_ns, tokens_in, tokens_out, cost_usd,
        role, seq, content, status, duration_ns, heartbeat_ns
    FROM conversations
    WHERE start_ns < ? AND (? = '' OR project = ?)
    ORDER BY project, thread_id, start_ns, turn_id, revision DESC, heartbeat_ns DESC
    LIMIT 1 BY project, thread_id, start_ns, turn_id
) AS t
    GROUP BY project, thread_id
) AS s
ANY LEFT JOIN 
(
    SELECT project, thread_id, groupArray(attr_name) AS attr_keys, groupArray(attr_text) AS attr_values, groupArray(attr_at) AS attr_ns
    FROM
    (
        SELECT project, thread_id, substring(attr_key, length('convtrace.thread.') + 1, 128) AS attr_name,
               argMax(substringUTF8(attr_value, 1, 1024), (start_ns, seq)) AS attr_text, max(start_ns) AS attr_at
        FROM
        (
            SELECT project, thread_id, start_ns, seq, attributes.key AS row_keys, attributes.value AS row_values
            FROM conversations
            WHERE start_ns < ? AND (? = '' OR project = ?) AND arrayExists(k -> startsWith(k, 'convtrace.thread.'), attributes.key)
        )
        ARRAY JOIN row_keys AS attr_key, row_values AS attr_value
        WHERE startsWith(attr_key, 'convtrace.thread.') AND length(attr_key) > length('convtrace.thread.')
          AND attr_key != 'convtrace.thread.id'
        GROUP BY project, thread_id, attr_name
        ORDER BY project, thread_id, attr_name
        LIMIT 32 BY project, thread_id
    )
    GROUP BY project, thread_id
) AS a USING (project, thread_id))
-- $1 = p
-- $2 = 1700000000000000000
-- $3 = 2
-- $4 = 2
-- $5 = 1700000000000000000
-- $6 = p
-- $7 = p
-- $8 = 1700000000000000000
-- $9 = p
-- $10 = p
