package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Ids of the threads whose length every generated database shares, for
// benchmarks that open one thread.
const (
	Thread10   = "synth-thread-10"   // 10 turns (5 calls)
	Thread200  = "synth-thread-200"  // 200 turns (100 calls)
	Thread1000 = "synth-thread-1000" // 1000 turns (500 calls)
)

// RarePhrase is Korean text ("purple elephant") that only the turns counted
// by Summary.RareTurns contain: a search that matches about twenty turns of
// a million.
const RarePhrase = "보라색 코끼리"

// CommonWord is in more than half of all turns' content: a search whose
// matches never run out.
const CommonWord = "function"

// Execer runs one statement; a clickhouse-go driver.Conn satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, args ...any) error
}

// Defaults of Config.
const (
	DefaultTurns      = 1_000_000
	DefaultThreads    = 5_000
	DefaultProject    = "synth"
	DefaultDays       = 90
	DefaultChunkTurns = 1_000_000
)

// How many calls the three known threads hold (two turns each), first in
// the data in this order: calls 0..4 are Thread10's, 5..104 Thread200's and
// 105..604 Thread1000's. newGen puts the bounds into callColumns.
const (
	thread10Calls   = 5
	thread200Calls  = 100
	thread1000Calls = 500
	knownCalls      = thread10Calls + thread200Calls + thread1000Calls
)

// Config says what to generate. Zero fields take the defaults.
type Config struct {
	// Turns is how many conversations rows to write (default 1,000,000).
	// Each call is two turns, so an odd count leaves the last call with
	// only its prompt, like a call still running.
	Turns int
	// Threads is how many threads the turns spread over, the three known
	// ones included (default 5,000). The other threads' lengths grow
	// evenly from 2 turns to about twice the average.
	Threads int
	// Project is every row's project (default "synth").
	Project string
	// IDPrefix begins every thread id and varies every trace and span
	// id, so that two generations (of two projects, say) share no id.
	IDPrefix string
	// Start is the first turn's time; the turns spread evenly over Days
	// from there (default 2026-01-01 UTC and 90 days).
	Start time.Time
	Days  int
	// ChunkTurns is how many turns one INSERT writes (default 1,000,000);
	// Progress hears about each chunk.
	ChunkTurns int
	// Progress, when set, gets one line per chunk written.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	if c.Turns == 0 {
		c.Turns = DefaultTurns
	}
	if c.Threads == 0 {
		c.Threads = DefaultThreads
	}
	if c.Project == "" {
		c.Project = DefaultProject
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Days == 0 {
		c.Days = DefaultDays
	}
	if c.ChunkTurns == 0 {
		c.ChunkTurns = DefaultChunkTurns
	}
	return c
}

// Validate reports a Config that cannot be generated: every thread needs at
// least one call, and counts stay within what the columns hold.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Threads < 4 {
		errs = append(errs, fmt.Errorf("threads: %d, want at least 4 (3 known threads and one more)", c.Threads))
	}
	// One call per other thread, and some left over so lengths can vary.
	if minTurns := 2 * (knownCalls + c.Threads); c.Turns < minTurns {
		errs = append(errs, fmt.Errorf("turns: %d, want at least %d for %d threads", c.Turns, minTurns, c.Threads))
	}
	if c.Turns > 1_000_000_000 {
		errs = append(errs, fmt.Errorf("turns: %d, want at most 1,000,000,000", c.Turns))
	}
	if c.Days < 1 {
		errs = append(errs, fmt.Errorf("days: %d, want at least 1", c.Days))
	}
	if c.ChunkTurns < 2 {
		errs = append(errs, fmt.Errorf("chunk turns: %d, want at least 2", c.ChunkTurns))
	}
	return errors.Join(errs...)
}

// Summary is what Generate wrote.
type Summary struct {
	Turns     int // conversations rows
	Calls     int // spans rows, one per call
	Threads   int
	RareTurns int // turns whose content holds RarePhrase
	Elapsed   time.Duration
}

// Generate writes cfg.Turns synthetic turns and their spans into the
// conversations and spans tables of conn's database, which must be migrated
// and should be empty: generating twice writes the same rows twice, which
// ReplacingMergeTree only folds on merge.
func Generate(ctx context.Context, conn Execer, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, fmt.Errorf("synth config: %w", err)
	}
	cfg = cfg.withDefaults()
	g := newGen(cfg)
	began := time.Now()
	for from := 0; from < cfg.Turns; from += cfg.ChunkTurns {
		n := min(cfg.ChunkTurns, cfg.Turns-from)
		if err := conn.Exec(ctx, g.turnsQuery(from, n)); err != nil {
			return Summary{}, fmt.Errorf("insert turns %d..%d: %w", from, from+n, err)
		}
		g.progress("conversations", from+n, cfg.Turns, began)
	}
	for from := 0; from < g.calls; from += cfg.ChunkTurns {
		n := min(cfg.ChunkTurns, g.calls-from)
		if err := conn.Exec(ctx, g.spansQuery(from, n)); err != nil {
			return Summary{}, fmt.Errorf("insert spans %d..%d: %w", from, from+n, err)
		}
		g.progress("spans", from+n, g.calls, began)
	}
	return Summary{
		Turns:     cfg.Turns,
		Calls:     g.calls,
		Threads:   cfg.Threads,
		RareTurns: g.rareTurns(),
		Elapsed:   time.Since(began),
	}, nil
}

// gen renders the INSERT … SELECT statements of one Config. The statements
// hold only numbers and the literals quoted here, never outside input, so
// they are rendered rather than bound: bound parameters are substituted
// client-side by clickhouse-go and would find its ? and @ placeholders in
// the content literals.
type gen struct {
	cfg    Config
	calls  int // one per two turns, the last one maybe with its prompt only
	every  int // one turn in every holds RarePhrase
	values *strings.Replacer
}

func newGen(cfg Config) *gen {
	g := &gen{cfg: cfg, calls: (cfg.Turns + 1) / 2, every: max(cfg.Turns/20, 1)}
	others := cfg.Threads - 3
	salt := ""
	if cfg.IDPrefix != "" {
		salt = ", " + quote(cfg.IDPrefix)
	}
	callNS := uint64(cfg.Days) * 24 * uint64(time.Hour) / uint64(g.calls)
	g.values = strings.NewReplacer(
		"{project}", quote(cfg.Project),
		"{idprefix}", quote(cfg.IDPrefix),
		"{idsalt}", salt,
		"{thread10}", quote(Thread10),
		"{thread200}", quote(Thread200),
		"{thread1000}", quote(Thread1000),
		"{others}", strconv.Itoa(others),
		// Calls beyond one per other thread, spread so that thread i
		// starts at call i + extra·i²/others²: lengths grow linearly.
		"{extra}", strconv.Itoa(g.calls-knownCalls-others),
		"{end10}", strconv.Itoa(thread10Calls),
		"{end200}", strconv.Itoa(thread10Calls+thread200Calls),
		"{known}", strconv.Itoa(knownCalls),
		"{start}", strconv.FormatUint(uint64(cfg.Start.UnixNano()), 10),
		"{callNS}", strconv.FormatUint(callNS, 10),
		"{rareEvery}", strconv.Itoa(g.every),
		"{rareAt}", strconv.Itoa(g.every/2),
		"{rare}", quote(" "+RarePhrase+"."),
		"{phases}", array(phases),
		"{speakers}", array(speakers),
		"{providers}", array(providers),
		"{models}", array(models),
		"{tools}", array(tools),
		"{errors}", array(failures),
		"{sentences}", array(sentences),
	)
	return g
}

func (g *gen) progress(table string, done, total int, began time.Time) {
	if g.cfg.Progress == nil {
		return
	}
	fmt.Fprintf(g.cfg.Progress, "synth: %s %d/%d rows (%s)\n", table, done, total, time.Since(began).Round(time.Millisecond))
}

// rareTurns counts the turn numbers n < Turns with n % every = every/2,
// the turns turnsQuery gives RarePhrase.
func (g *gen) rareTurns() int {
	at := g.every / 2
	if g.cfg.Turns <= at {
		return 0
	}
	return (g.cfg.Turns-at-1)/g.every + 1
}

// The vocabularies the rows pick from. Their order is part of the data:
// changing it changes every generated database.
var (
	phases   = []string{"plan", "review", "execute", "verify", "revision", "critique", "adjudicate"}
	speakers = []string{ // two per phase, picked by call parity
		"planner-a", "planner-b", "reviewer", "reviewer", "executor", "executor", "verifier", "verifier",
		"planner-a", "planner-b", "critic-a", "critic-b", "adjudicator", "adjudicator",
	}
	providers = []string{"anthropic", "openai", "google", "openai", "anthropic"}
	models    = []string{"claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "gpt-5-mini", "claude-opus-4-1"}
	tools     = []string{"bash", "read_file", "grep", "edit_file", "run_tests"}
	failures  = []string{
		"provider returned 529: overloaded",
		"context deadline exceeded after 120s",
		"rate limited (429): retry after 20s",
	}
	sentences = []string{
		"The function parseConfig returns an error when the file is missing, so the caller must check it first.",
		"Let me read the failing test output before changing anything in the build scripts.",
		"I propose splitting the migration into two steps: add the column, then backfill it in batches.",
		"The reviewer is right that this function allocates on every call; a pooled buffer avoids it.",
		"Running go test ./... now; the previous run timed out on the integration package.",
		"The plan looks sound, but step three skips the rollback path when the deploy fails halfway.",
		"Edited src/server/handler.go: the function now validates the request before opening a transaction.",
		"All 214 tests pass; coverage of the parser package went from 71% to 84%.",
		"The critique misses that the cache is shared between tenants, which is the real risk here.",
		"Adjudication: plan B wins because it keeps the public API stable and ships in one release.",
		"TypeError: Cannot read properties of undefined (reading 'map') at renderList (list.tsx:42).",
		"We should measure before optimizing: the profile shows 60% of the time in JSON decoding.",
		"This helper function duplicates the one in utils/strings.ts; reuse it instead of copying it.",
		"The retry loop needs a jittered backoff, otherwise all workers hammer the provider at once.",
		"Verified in the staging environment: latency p95 dropped from 840 ms to 310 ms.",
		"Revision 2 renames the function and adds a doc comment explaining why the lock is held.",
		"데이터베이스 마이그레이션을 두 단계로 나누는 것이 더 안전합니다. 먼저 열을 추가하고 나중에 채웁니다.",
		"리뷰어의 지적이 맞습니다. 이 함수는 호출될 때마다 메모리를 할당합니다.",
		"테스트가 모두 통과했습니다. 배포 전에 스테이징 환경에서 한 번 더 확인하겠습니다.",
		"この関数は設定ファイルがない場合にエラーを返すので、呼び出し側で確認が必要です。",
		"レビューの指摘どおり、キャッシュがテナント間で共有されている点が本当のリスクです。",
		"ステージング環境で検証しました。レイテンシが大幅に改善されています。",
		"Shipped it 🚀 — all checks green ✅, only the flaky e2e test 🐛 needs a retry.",
		"Build is red 🔥 again: the linter 🧹 flags two unused imports in the new function.",
	}
)

// callColumns computes, from the call number `call`, everything the two
// turns of one call and its span share. Calls below {known} are the known
// threads ({end10} and {end200} end the first two); the others are
// numbered q and spread over the other threads so that thread i starts at
// q = i + extra·i²/others² (solved for i below), at least one call each.
const callColumns = `
    toInt64(call) - {known} AS q,
    {extra} / ({others} * {others}) AS spread,
    least(toUInt64(floor((sqrt(1 + 4 * spread * greatest(q, toInt64(0))) - 1) / (2 * spread))), toUInt64({others} - 1)) AS other,
    multiIf(call < {end10}, 0, call < {end200}, 1, call < {known}, 2, 3 + other) AS thr,
    toUInt64(greatest(multiIf(call < {end10}, toInt64(call), call < {end200}, toInt64(call) - {end10}, call < {known}, toInt64(call) - {end200},
        q - toInt64(ceil(other + spread * other * other))), toInt64(0))) AS pos,
    concat({idprefix}, multiIf(thr = 0, {thread10}, thr = 1, {thread200}, thr = 2, {thread1000}, concat('synth-', toString(thr)))) AS thread,
    concat(lower(hex(bitOr(cityHash64(thr, 'trace1'{idsalt}), 9223372036854775808))),
           lower(hex(bitOr(cityHash64(thr, 'trace2'{idsalt}), 9223372036854775808)))) AS trace,
    lower(hex(bitOr(cityHash64(call, 'span'{idsalt}), 9223372036854775808))) AS span,
    intDiv(pos, 3) % 7 AS phase_i,
    arrayElement({phases}, 1 + phase_i) AS phase_s,
    toUInt16(least(intDiv(pos, 21), 65535)) AS round_n,
    1 + phase_i * 2 + pos % 2 AS speaker_i,
    arrayElement({speakers}, speaker_i) AS speaker_s,
    if(phase_i = 2 AND cityHash64(call, 'agent') % 5 = 0, 'explorer', '') AS agent_s,
    1 + cityHash64(thr, speaker_i) % 5 AS model_i,
    arrayElement({providers}, model_i) AS provider_s,
    arrayElement({models}, model_i) AS model_s,
    cityHash64(call, 'kind') % 100 AS kind_h,
    multiIf(kind_h >= 97, 2, phase_i = 2 AND kind_h < 40, 1, 0) AS kind,
    if(kind = 1, 'execute_tool', 'chat') AS operation_s,
    if(kind = 1, arrayElement({tools}, 1 + cityHash64(call, 'tool') % 5), '') AS tool_s,
    if(kind = 1, concat('call_', substring(span, 1, 12)), '') AS tool_call_s,
    if(kind = 2, arrayElement({errors}, 1 + cityHash64(call, 'error') % 3), '') AS error_s,
    {start} + call * {callNS} AS call_start,
    intDiv({callNS} * (10 + cityHash64(call, 'duration') % 80), 100) AS duration,
    cityHash64(call, 'usage') AS usage_h,
    kind = 0 AND usage_h % 10 != 0 AS usage_known,
    if(usage_known, toUInt32(500 + usage_h % 12000), NULL) AS tokens_in_n,
    if(usage_known, toUInt32(50 + intDiv(usage_h, 12000) % 2000), NULL) AS tokens_out_n,
    if(usage_known AND usage_h % 3 = 0, toUInt32(intDiv(500 + usage_h % 12000, 2)), NULL) AS cache_read_n,
    if(usage_known AND usage_h % 7 = 1, toUInt32(1024), NULL) AS cache_write_n,
    if(usage_known AND model_i IN (2, 4), toUInt32(intDiv(50 + intDiv(usage_h, 12000) % 2000, 3)), NULL) AS reasoning_n,
    if(usage_known AND usage_h % 20 != 3,
       ((500 + usage_h % 12000) * 3 + (50 + intDiv(usage_h, 12000) % 2000) * 15) / 1000000, NULL) AS cost_n`

// turnsQuery inserts turns from..from+n-1: turn t is side t%2 (0 prompt, 1
// answer) of call t/2.
func (g *gen) turnsQuery(from, n int) string {
	return g.values.Replace(`
INSERT INTO conversations
    (turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
     phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
     content, content_bytes, truncated,
     tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd,
     status, error, start_ns, duration_ns, ttft_ns, attributes.key, attributes.value)
SELECT
    concat(span, ':', role_s, ':', toString(side)), trace, span, '', '', {project}, thread, concat('session-', toString(thr)),
    phase_s, speaker_s, agent_s, round_n, role_s, toUInt16(side), operation_s, provider_s, model_s, tool_s, tool_call_s,
    content_s, toUInt32(length(content_s)), toUInt8(0),
    if(side = 1, tokens_in_n, NULL), if(side = 1, tokens_out_n, NULL), if(side = 1, cache_read_n, NULL),
    if(side = 1, cache_write_n, NULL), if(side = 1, reasoning_n, NULL), if(side = 1, cost_n, NULL),
    if(side = 1 AND kind = 2, 'error', 'ok'), if(side = 1, error_s, ''),
    if(side = 1, call_start + duration, call_start), if(side = 1, duration, 0),
    if(side = 1 AND kind = 0 AND usage_h % 2 = 0, intDiv(duration, 2 + usage_h % 7), 0),
    ['convtrace.synthetic'], ['1']
FROM
(
    SELECT
        number + ` + strconv.Itoa(from) + ` AS t,
        intDiv(t, 2) AS call,
        t % 2 AS side,` + callColumns + `,
        multiIf(side = 0 AND kind = 1, 'tool_call', side = 0, 'prompt', kind = 1, 'tool_result', kind = 2, 'error', 'response') AS role_s,
        concat(if(side = 1 AND kind = 2, error_s,
                  concat(if(side = 0, concat('[', phase_s, ' round ', toString(round_n), '] '), ''),
                         arrayElement({sentences}, 1 + cityHash64(t, 's1') % length({sentences})), ' ',
                         arrayElement({sentences}, 1 + cityHash64(t, 's2') % length({sentences})), ' ',
                         arrayElement({sentences}, 1 + cityHash64(t, 's3') % length({sentences})))),
               if(t % {rareEvery} = {rareAt}, {rare}, '')) AS content_s
    FROM system.numbers
    LIMIT ` + strconv.Itoa(n) + `
)`)
}

// spansQuery inserts the spans of calls from..from+n-1.
func (g *gen) spansQuery(from, n int) string {
	return g.values.Replace(`
INSERT INTO spans
    (trace_id, span_id, parent_span_id, project, thread_id, phase, round, speaker, agent, name, kind,
     start_ns, duration_ns, status, status_message, operation, provider, model, tokens_in, tokens_out, cost_usd,
     attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns)
SELECT
    trace, span, '', {project}, thread, phase_s, round_n, speaker_s, agent_s,
    concat(operation_s, ' ', if(kind = 1, tool_s, model_s)), 'client',
    call_start, duration, if(kind = 2, 'error', 'ok'), error_s, operation_s, provider_s, model_s,
    tokens_in_n, tokens_out_n, cost_n,
    ['convtrace.synthetic'], ['1'], ['service.name'], ['synth-pipeline'],
    ['gen_ai.prompt', 'gen_ai.response'], [call_start, call_start + duration]
FROM
(
    SELECT
        number + ` + strconv.Itoa(from) + ` AS call,` + callColumns + `
    FROM system.numbers
    LIMIT ` + strconv.Itoa(n) + `
)`)
}

// quote renders s as a ClickHouse string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// array renders ss as a ClickHouse array of string literals.
func array(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
