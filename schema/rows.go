package schema

import (
	"reflect"
	"strconv"
	"time"
)

// Roles of a turn.
const (
	RolePrompt     = "prompt"
	RoleResponse   = "response"
	RoleError      = "error"
	RoleSystem     = "system"
	RoleToolCall   = "tool_call"
	RoleToolResult = "tool_result"
	// RoleToolResultError is the answer of a tool execution that failed.
	RoleToolResultError = "tool_result_error"
	// RoleContextReset marks where a thread's recent context starts anew
	// (store.RecentContext reads only what comes after the last one); the
	// turns before it stay stored and shown.
	RoleContextReset = "context_reset"
)

// Turn statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Sources of a turn's cost_usd. Every turn that ends a provider call (its
// response or error turn) has one, so cost_source != ” selects exactly one
// row per call; other turns (prompts, tool turns) have the empty source.
const (
	CostProvided = "provided" // given by the caller or the provider
	CostPriced   = "priced"   // computed at ingest from the tokens and the price table
	CostUnknown  = "unknown"  // tokens known, model not in the price table: cost NULL
	CostNone     = "none"     // the call reported no usage: tokens and cost NULL
)

// Attr is one key/value pair of a row's Nested attributes column.
type Attr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Turn is one row of the conversations table: one thing one agent said.
type Turn struct {
	TurnID       string `json:"turn_id"`
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	ParentTurnID string `json:"parent_turn_id"`
	Project      string `json:"project"`
	ThreadID     string `json:"thread_id"`
	SessionID    string `json:"session_id"`
	Phase        string `json:"phase"`
	Speaker      string `json:"speaker"`
	Agent        string `json:"agent"`
	Round        uint16 `json:"round"`
	Role         string `json:"role"`
	Seq          uint16 `json:"seq"`
	Operation    string `json:"operation"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	ToolName     string `json:"tool_name"`
	ToolCallID   string `json:"tool_call_id"`
	Content      string `json:"content"`
	// History are the ids of the earlier messages a prompt repeats, in
	// order, each stored once in the messages table; Content then holds
	// only the messages after them (SplitHistory). Readers put the prompt
	// back together (genai.JoinHistory).
	History      []string `json:"-"`
	ContentBytes uint32   `json:"content_bytes"`
	Truncated    bool     `json:"truncated"`
	// Internal marks a turn kept for the audit trail only: out of the
	// recent context and of the thread page unless asked for.
	Internal bool `json:"internal"`

	// Token counts are nil when unknown, which the viewer shows as —.
	TokensIn         *uint32  `json:"tokens_in"`
	TokensOut        *uint32  `json:"tokens_out"`
	TokensCacheRead  *uint32  `json:"tokens_cache_read"`
	TokensCacheWrite *uint32  `json:"tokens_cache_write"`
	TokensReasoning  *uint32  `json:"tokens_reasoning"`
	CostUSD          *float64 `json:"cost_usd"`
	CostSource       string   `json:"cost_source"` // CostProvided, CostPriced, CostUnknown, CostNone or ""

	Status     string `json:"status"`
	Error      string `json:"error"`
	StartNS    uint64 `json:"start_ns"`
	DurationNS uint64 `json:"duration_ns"`
	// TTFTNS is a streamed call's time to first token, on the turn that
	// ends the call; 0 when unknown.
	TTFTNS uint64 `json:"ttft_ns"`
	// HeartbeatNS is when the recording process last saw the call alive,
	// on the prompt rows of a call still running; 0 otherwise.
	HeartbeatNS uint64 `json:"-"`
	Attributes  []Attr `json:"attributes"`
	// Revision orders copies of a turn written more than once: the highest
	// holds the most (ddl/sql/0008_join_staging.sql, ddl/sql/0009_revision.sql).
	Revision uint64 `json:"-"`
}

// TurnColumns is the column list of every insert into conversations, in the
// order of Turn.Values. The ts column is left to its DEFAULT.
var TurnColumns = []string{
	"turn_id", "trace_id", "span_id", "parent_span_id", "parent_turn_id",
	"project", "thread_id", "session_id", "phase", "speaker", "agent", "round",
	"role", "seq", "operation", "provider", "model", "tool_name", "tool_call_id",
	"content", "history", "content_bytes", "truncated", "internal",
	"tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning",
	"cost_usd", "cost_source", "status", "error", "start_ns", "duration_ns", "ttft_ns", "heartbeat_ns",
	"attributes.key", "attributes.value", "revision",
}

// DayNS is one UTC day in nanoseconds: the unit of the cost summaries,
// which group turns by intDiv(start_ns, DayNS) (DaySQL in a query).
const (
	DayNS  = 86400 * uint64(time.Second)
	DaySQL = "86400000000000"
)

// TSBounds returns bounds on the ts column (DateTime: start_ns in whole
// seconds) for the turns that started in [fromNS, toNS), for a query that
// filters on both: ts >= fromSec AND ts <= toSec prunes the partitions and
// keeps every such turn, start_ns then selects exactly. toSec is capped
// at DateTime's last second, in 2106.
func TSBounds(fromNS, toNS uint64) (fromSec, toSec uint64) {
	return fromNS / uint64(time.Second), min(toNS/uint64(time.Second)+1, 1<<32-1)
}

// Values returns the turn's column values in TurnColumns order: its row
// of a one-row TurnBlock.
func (t *Turn) Values() []any {
	var b TurnBlock
	b.Add(t)
	return firstRow(b.Columns())
}

// firstRow is the first value of each of a block's columns.
func firstRow(cols []any) []any {
	values := make([]any, len(cols))
	for i, col := range cols {
		values[i] = reflect.ValueOf(plain(col)).Index(0).Interface()
	}
	return values
}

// plain is a block's column with strings in place of its pointers to them.
func plain(col any) any {
	switch col := col.(type) {
	case []*string:
		return deref(col)
	case [][]*string:
		rows := make([][]string, len(col))
		for i, row := range col {
			rows[i] = deref(row)
		}
		return rows
	}
	return col
}

func deref(ps []*string) []string {
	strs := make([]string, len(ps))
	for i, p := range ps {
		strs[i] = *p
	}
	return strs
}

// Span is one row of the spans table: every span, LLM call or not, for the
// trace waterfall. Event content lives in conversations; here only the
// events' names and times are kept.
type Span struct {
	TraceID      string   `json:"trace_id"`
	SpanID       string   `json:"span_id"`
	ParentSpanID string   `json:"parent_span_id"`
	Project      string   `json:"project"`
	ThreadID     string   `json:"thread_id"`
	Phase        string   `json:"phase"`
	Round        uint16   `json:"round"`
	Speaker      string   `json:"speaker"`
	Agent        string   `json:"agent"`
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	StartNS      uint64   `json:"start_ns"`
	DurationNS   uint64   `json:"duration_ns"`
	Status       string   `json:"status"`
	StatusMsg    string   `json:"status_message"`
	Operation    string   `json:"operation"`
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`
	TokensIn     *uint32  `json:"tokens_in"`
	TokensOut    *uint32  `json:"tokens_out"`
	CostUSD      *float64 `json:"cost_usd"`
	Attributes   []Attr   `json:"attributes"`
	Resource     []Attr   `json:"resource"`
	EventNames   []string `json:"event_names"`
	EventTimesNS []uint64 `json:"event_times_ns"`
}

// SpanColumns is the column list of every insert into spans, in the order of
// Span.Values.
var SpanColumns = []string{
	"trace_id", "span_id", "parent_span_id", "project", "thread_id", "phase", "round",
	"speaker", "agent", "name", "kind", "start_ns", "duration_ns", "status", "status_message",
	"operation", "provider", "model", "tokens_in", "tokens_out", "cost_usd",
	"attributes.key", "attributes.value", "resource.key", "resource.value",
	"events.name", "events.time_ns",
}

// Values returns the span's column values in SpanColumns order: its row
// of a one-row SpanBlock.
func (s *Span) Values() []any {
	var b SpanBlock
	b.Add(s)
	return firstRow(b.Columns())
}

// costSource is the turn's CostSource, or, when a writer left it blank,
// what the column's DEFAULT (ddl/sql/0005_cost_source.sql) would store: a cost is
// provided, tokens without a cost are unknown. So a turn written through
// Values never carries usage without a source, whoever wrote it.
func (t *Turn) costSource() *string {
	switch {
	case t.CostSource != "":
		return &t.CostSource
	case t.CostUSD != nil:
		return &costProvided
	case t.TokensIn != nil || t.TokensOut != nil:
		return &costUnknown
	}
	return &t.CostSource
}

// costProvided and costUnknown are the sources costSource points to.
var costProvided, costUnknown = CostProvided, CostUnknown

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// TurnID returns the deterministic id of a turn: {span_id}:{role}:{seq}. A
// span delivered twice yields the same ids, so storage folds the copies.
func TurnID(spanID, role string, seq uint16) string {
	return spanID + ":" + role + ":" + strconv.Itoa(int(seq))
}

// PromptTurnID is the id of a call's prompt turn, the first of the call.
func PromptTurnID(spanID string) string { return TurnID(spanID, RolePrompt, 0) }

// ResponseTurnID is the id of a call's response turn, or of its error turn
// when the call failed.
func ResponseTurnID(spanID string, failed bool) string {
	if failed {
		return TurnID(spanID, RoleError, 1)
	}
	return TurnID(spanID, RoleResponse, 1)
}

// Kinds of a join_staging row.
const (
	StagedSpan    uint8 = 0 // a provider call's span
	StagedLog     uint8 = 1 // a log record carrying a call's content
	StagedWritten uint8 = 2 // turns were written from the records before it
	StagedContext uint8 = 3 // an ancestor the call inherits from arrived (no payload)
)

// Staged is one row of join_staging: half of an OTLP call waiting for the
// other half, or the record that its turns were written.
type Staged struct {
	TraceID    string
	SpanID     string
	RecordID   string // "span" for the span; a hash of a log record's payload
	Kind       uint8
	Pos        uint32 // a log record's position in its request; of a StagedWritten row, 1 when the call folded into another span's turns
	ReceivedNS uint64
	Merged     uint32 // of a StagedWritten row: how many records the turns merged
	Payload    []byte
}

// StagedColumns is the column list of every insert into join_staging, in
// the order of Staged.Values.
var StagedColumns = []string{"trace_id", "span_id", "record_id", "kind", "pos", "received_ns", "merged", "payload"}

// Values returns the row's column values in StagedColumns order.
func (s *Staged) Values() []any {
	return []any{s.TraceID, s.SpanID, s.RecordID, s.Kind, s.Pos, s.ReceivedNS, s.Merged, string(s.Payload)}
}
