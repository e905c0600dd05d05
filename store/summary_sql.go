package store

import (
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// The list reads thread_summary, which holds per (project, thread) what
// the list shows and filters on, computed so that a turn delivered twice
// counts once. Aggregating FINAL over the whole table on every request is
// what made the list slow; the summary is recomputed only for the threads
// whose raw rows changed (see refreshSummaries). summarizeThreads and
// summarizePlainThreads are that computation.
//
// It reads the rows FINAL would: one per sort key (project, thread_id,
// start_ns, turn_id), the newest revision (copies of a turn share a
// partition since ts derives from start_ns). When a thread's turns have
// copies, LIMIT 1 BY keeps one of each; when they have none, which the
// fingerprint tells (distinct turn ids = rows), the rows are read as they
// are. On ClickHouse 18.16, FINAL over a set of threads costs seconds
// whatever their number; LIMIT 1 BY over the same rows a tenth of that,
// and the rows as they are a tenth again.
//
// The aliases differ from the column names: ClickHouse substitutes aliases
// into expressions, and sum(tokens_in) AS tokens_in reads as a cycle on
// some versions. sum over a Nullable column is Nullable and NULL when
// every value is NULL, on 18.16 as on 26.x: that is what keeps "unknown"
// apart from zero. The texts are 2000 runes of the first prompt (enough to
// find the user's message in messages JSON that opens with a system
// prompt, far less than a 5 MB prompt), of the last response and of the
// last turn with content, each with its position (start_ns, seq) and a
// count saying whether there is one, so that the texts of a thread in two
// projects combine (selectThreadSums). Each row's content is cut to
// 8,000 bytes, which hold 2000 runes of any text, and to 2000 runes only
// once the aggregate picked it: cutting every row by runes took half the
// time of a cold build, and the byte cut keeps the aggregate's states
// small. The two %s of both are the condition on the turns (of those
// summarized, then of those whose attributes are read), the only SQL added
// to them.
//
// The status columns: first_ns, where the thread's duration starts (it
// ends at last_ns: a call's answer starts when the call ends); the calls
// that failed and those that have not ended (callEnded, as the thread page
// decides it), counted by a 64-bit hash of their span ids, which copies
// share; and alive_ns, the newest start or heartbeat, from which the list
// tells a running thread from an interrupted one at read time. The
// thread attributes come from threadAttrsOf, joined on.
//
// summarizeThreadsFrom is summarizeThreads with more columns (the first
// %s), over any source of turns (the second), with any HAVING (the third)
// and the thread attributes of a threadAttrsOf (the fourth).
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
        greatest(max(start_ns), max(heartbeat_ns)) AS alive_ns%s
    FROM %s AS t
    GROUP BY project, thread_id%s
) AS s
ANY LEFT JOIN %s AS a USING (project, thread_id)`

// threadAttrPrefix is schema.KeyThreadAttrPrefix as an SQL string.
const threadAttrPrefix = `'` + schema.KeyThreadAttrPrefix + `'`

// threadAttrsOf reads the thread attributes of the threads whose turns
// the %s (a condition on conversations) selects: per thread, each
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
            WHERE %s AND arrayExists(k -> startsWith(k, ` + threadAttrPrefix + `), attributes.key)
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

// summarizeThreads folds the copies of each turn first, keeping the newest
// revision. Its two %s are the condition on the turns.
var summarizeThreads = fmt.Sprintf(summarizeThreadsFrom, "", foldedTurns, "", threadAttrsOf)

// foldedTurns is the source of summarizeThreads: the turns the %s selects,
// one copy of each, among the newest revision's the one with the newest
// heartbeat (a running call's recorder stores its prompt again with each).
const foldedTurns = `
(
    SELECT ` + summarizedTurnColumns + `
    FROM conversations
    WHERE %s
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
var summarizePlainThreads = fmt.Sprintf(summarizeThreadsFrom, "", `
(
    SELECT `+summarizedTurnColumns+`
    FROM conversations
    WHERE %s
)`, `
    HAVING count() = uniqExact(turn_id)`, threadAttrsOf)

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
// (fingerprintColumns' count and hash sum of its rows), the hash 0 when
// its turns have copies (fewer distinct turn ids than rows), which the
// build then summarizes again with them folded.
var summarizeAllThreads = fmt.Sprintf(summarizeThreadsFrom, `,
        count() AS rows_n,
        if(rows_n = uniqExact(turn_id), sum(cityHash64(turn_id, start_ns)), 0) AS rows_h`, "conversations", "",
	fmt.Sprintf(threadAttrsOf, "1"))
