package query

import "fmt"

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
// small. The %s of both is the condition on the turns, the only SQL added
// to them.
//
// summarizeThreadsFrom is summarizeThreads with more columns (the first
// %s), over any source of turns (the second) and with any HAVING (the
// third).
const summarizeThreadsFrom = `
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
    substringUTF8(argMaxIf(substring(content, 1, 8000), (start_ns, seq), content != ''), 1, 2000) AS last_turn%s
FROM %s AS t
GROUP BY project, thread_id%s`

// summarizeThreads folds the copies of each turn first, keeping the newest
// revision.
var summarizeThreads = fmt.Sprintf(summarizeThreadsFrom, "", foldedTurns, "")

// foldedTurns is the source of summarizeThreads: the turns the %s selects,
// one copy of each.
const foldedTurns = `
(
    SELECT project, thread_id, turn_id, provider, start_ns, tokens_in, tokens_out, cost_usd, role, seq, content
    FROM conversations
    WHERE %s
    ORDER BY project, thread_id, start_ns, turn_id, revision DESC
    LIMIT 1 BY project, thread_id, start_ns, turn_id
)`

// summarizePlainThreads reads the rows as they are, for threads whose
// turns have no copies: a tenth of the time at ten million turns. The
// HAVING leaves out a thread that got a copy after its fingerprint was
// read; its new part has it recomputed at the next request.
var summarizePlainThreads = fmt.Sprintf(summarizeThreadsFrom, "", `
(
    SELECT project, thread_id, turn_id, provider, start_ns, tokens_in, tokens_out, cost_usd, role, seq, content
    FROM conversations
    WHERE %s
)`, `
HAVING count() = uniqExact(turn_id)`)

// summaryColumns are thread_summary's columns that summarizeThreads
// computes, in its order.
const summaryColumns = `project, thread_id, providers, last_ns, turns, tokens_in_sum, tokens_out_sum, cost_sum,
    prompts, first_prompt_ns, first_prompt_seq, first_prompt, responses, last_response_ns, last_response_seq, last_response,
    contents, last_turn_ns, last_turn_seq, last_turn`

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
    if(rows_n = uniqExact(turn_id), sum(cityHash64(turn_id, start_ns)), 0) AS rows_h`, "conversations", "")
