package store

import "github.com/convtrace/convtrace/schema"

// thread_summary holds per (project, thread) what the threads list shows
// and filters on, each turn counted once; docs/design/summaries.md, "What
// a thread summary reads", says how the SQL below reads it.
//
// summarizeThreadsFrom summarizes the threads of {turns} (a source of
// their rows), with {columns} more, a {having} and the thread attributes
// of {attrs} (a threadAttrsOf).
const summarizeThreadsFrom = `
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
        toUInt64(uniqExactIf(cityHash64(span_id), role IN ('prompt', 'tool_call') OR ` + callEnded + `)
            - uniqExactIf(cityHash64(span_id), ` + callEnded + `)) AS open_calls,
        greatest(max(start_ns), max(heartbeat_ns)) AS alive_ns{columns}
    FROM {turns} AS t
    GROUP BY project, thread_id{having}
) AS s
ANY LEFT JOIN {attrs} AS a USING (project, thread_id)`

// threadAttrPrefix is schema.KeyThreadAttrPrefix as an SQL string.
const threadAttrPrefix = `'` + schema.KeyThreadAttrPrefix + `'`

// threadAttrsOf reads the thread attributes of the threads whose turns
// {cond} (a condition on conversations) selects: per thread, each
// attribute convtrace.thread.<name> but the thread id, by name, with its
// value on the latest turn that carries it (cut to 1,024 characters) and
// that turn's start. Copies of a turn carry the same attributes, so the
// raw rows serve. At most 32 names per thread, the first by name: the
// keys and values come from spans, which anyone may send.
const threadAttrsOf = `
(
    SELECT project, thread_id, groupArray(attr_name) AS attr_keys, groupArray(attr_text) AS attr_values, groupArray(attr_at) AS attr_ns
    FROM
    (
        SELECT project, thread_id, substring(attr_key, length(` + threadAttrPrefix + `) + 1, 128) AS attr_name,
               argMax(substringUTF8(attr_value, 1, 1024), (start_ns, seq)) AS attr_text, max(start_ns) AS attr_at
        FROM
        (
            SELECT project, thread_id, start_ns, seq, attributes.key AS row_keys, attributes.value AS row_values
            FROM conversations
            WHERE {cond} AND arrayExists(k -> startsWith(k, ` + threadAttrPrefix + `), attributes.key)
        )
        ARRAY JOIN row_keys AS attr_key, row_values AS attr_value
        WHERE startsWith(attr_key, ` + threadAttrPrefix + `) AND length(attr_key) > length(` + threadAttrPrefix + `)
          AND attr_key != '` + schema.KeyThreadID + `'
        GROUP BY project, thread_id, attr_name
        ORDER BY project, thread_id, attr_name
        LIMIT 32 BY project, thread_id
    )
    GROUP BY project, thread_id
)`

// summarize is summarizeThreadsFrom over turns, with attrs, columns and
// having.
func summarize(turns, attrs sqlText, columns, having string) sqlText {
	return sqlf(summarizeThreadsFrom, holes{"turns": turns, "attrs": attrs, "columns": raw(columns), "having": raw(having)})
}

// summarizeThreads summarizes the threads of the turns cond selects,
// folding the copies of each turn first.
func summarizeThreads(cond sqlText) sqlText {
	return summarize(sqlf(foldedTurns, holes{"cond": cond}), sqlf(threadAttrsOf, holes{"cond": cond}), "", "")
}

// foldedTurns is the turns {cond} selects, one copy of each, among the
// newest revision's the one with the newest heartbeat (a running call's
// recorder stores its prompt again with each).
const foldedTurns = `
(
    SELECT ` + summarizedTurnColumns + `
    FROM conversations
    WHERE {cond}
    ORDER BY project, thread_id, start_ns, turn_id, revision DESC, heartbeat_ns DESC
    LIMIT 1 BY project, thread_id, start_ns, turn_id
)`

// summarizedTurnColumns are the columns of conversations a summary reads.
const summarizedTurnColumns = `project, thread_id, turn_id, span_id, provider, start_ns, tokens_in, tokens_out, cost_usd,
        role, seq, content, status, duration_ns, heartbeat_ns`

// summarizePlainThreads reads the rows as they are, for threads whose
// turns have no copies: a tenth of the time at ten million turns. The
// HAVING leaves out a thread that got a copy after its fingerprint was
// read; its new part has it recomputed at the next request.
func summarizePlainThreads(cond sqlText) sqlText {
	turns := sqlf(`
(
    SELECT `+summarizedTurnColumns+`
    FROM conversations
    WHERE {cond}
)`, holes{"cond": cond})
	return summarize(turns, sqlf(threadAttrsOf, holes{"cond": cond}), "", `
    HAVING count() = uniqExact(turn_id)`)
}

// summaryColumns are thread_summary's columns that summarizeThreads
// computes; summaryValueColumns are those but for project and thread_id,
// which thread_shells has too.
const (
	summaryColumns      = `project, thread_id, ` + summaryValueColumns
	summaryValueColumns = `providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn, first_ns, failed_calls, open_calls, alive_ns, attr_keys, attr_values, attr_ns`
)

// summaryLayout is the layout column of a summary computed with every
// column of summaryColumns; summaries of an older layout are recomputed
// (selectSummaryFingerprints).
const summaryLayout = "1"

// latestSummaries is the newest row of every (project, thread) in
// thread_summary: the one with the highest computed_ns, one row even on a
// tie. Not FINAL with a WHERE: ClickHouse 18.16 may move the condition to
// PREWHERE, before FINAL folds the rows, and bring back an older row.
const latestSummaries = `(
    SELECT *
    FROM thread_summary
    ORDER BY computed_ns DESC
    LIMIT 1 BY project, thread_id
)`

// summarizeAllThreads is the first build's one pass over conversations:
// every thread summarized from its rows as they are, with its fingerprint
// (the count and hash sum of its rows), the hash 0 when its turns have
// copies (fewer distinct turn ids than rows), which the build then
// summarizes again with them folded.
var summarizeAllThreads = summarize(raw("conversations"), sqlf(threadAttrsOf, holes{"cond": raw("1")}), `,
        count() AS rows_n,
        if(rows_n = uniqExact(turn_id), sum(cityHash64(turn_id, start_ns)), 0) AS rows_h`, "")
