package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// Turn is one row of the conversations table as a thread page reads it:
// the stored row (its content possibly cut, its attributes capped) with
// what the page adds from the other rows and tables.
type Turn struct {
	schema.Turn
	// ContentCut says Content is only the start of the stored content: the
	// rest is at /api/threads/:id/turns/:turn_id/content.
	ContentCut bool `json:"content_cut"`
	// Attributes are the turn's first 50 attributes (pageAttributesStr), each value
	// cut to 1,024 characters; AttributesTotal counts them all,
	// which /api/threads/:id/turns/:turn_id/attributes returns whole.
	Attributes      map[string]string `json:"attributes"`
	AttributesTotal int               `json:"attributes_total"`

	// Running marks a prompt (or tool call) whose call has not ended: its
	// span has no response, tool result or error row yet. Interrupted
	// marks one that has not ended either but whose recorder stopped its
	// heartbeat: its process died.
	Running     bool `json:"running"`
	Interrupted bool `json:"interrupted"`

	// The user's note on the turn (turn_notes).
	Starred bool   `json:"starred"`
	Memo    string `json:"memo"`
}

// TurnFilter narrows a thread's turns; a zero field does not filter.
type TurnFilter struct {
	// Phases keeps the turns of these phases, matched case-insensitively;
	// "" is the turns without a phase.
	Phases  []string
	Role    string
	Speaker string
	Session string
	// Agent is AgentMain for the main agent's turns (agent ''), or one
	// sub-agent's name.
	Agent        string
	Tool         string
	FromNS, ToNS uint64 // start time bounds, inclusive
	Starred      bool
	Query        string // in content or speaker, case-insensitive
	// TurnID keeps one turn; no request parameter sets it.
	TurnID string
	// SpanID keeps the turns of one call, as the detail pane reads them;
	// no request parameter sets it.
	SpanID string
	// HideInternal leaves out internal turns, as a thread's page does
	// unless asked for them.
	HideInternal bool
	// LeaveHistory leaves the history a prompt repeats out of its
	// Content, whose History still names it: what a page shows of a
	// prompt is its new messages. No request parameter sets it.
	LeaveHistory bool
	// Changed keeps the turns a live page has not seen: those that
	// started after its newest, and every turn of the calls it shows
	// running and of their own calls (so an agent run's answer is placed
	// after them, as on the page). No request parameter sets it.
	Changed *Changes
}

// Changes is what a live page has seen of a thread.
type Changes struct {
	AfterNS uint64   // the start of its newest turn
	Spans   []string // the span ids of its running calls
}

// AgentMain is the agent filter value for turns of the main agent, whose
// agent is empty.
const AgentMain = "main"

// PageContentBytes is how much of a turn's content a page or the turns API
// carries; a longer turn (up to megabytes) is fetched alone on demand.
const PageContentBytes = 64 << 10

// AllContent is a content limit that reads all of it.
const AllContent = 1 << 32

// selectTurns reads a thread's turns, at most the number of content bytes
// asked for of each. LIMIT 1 BY turn_id keeps one copy of a turn delivered
// twice, merged or not: the highest revision, which holds the most. The prefix has an alias of its own: ClickHouse
// would substitute an alias named content into the search condition.
//
// callEnded is true of a row that shows its call has ended: an answer
// (response, tool result, error), a failed status, or a duration, which
// only ended spans have. A call none of whose rows is such is running, or
// interrupted (callAlive).
const callEnded = `(role IN ('response', 'tool_result', 'tool_result_error', 'error') OR status = 'error' OR duration_ns > 0)`

// callAlive is true of a row that shows its call was alive at a cutoff,
// the placeholder: the call started, or its recorder sent a heartbeat,
// since.
const callAlive = `greatest(start_ns, heartbeat_ns) >= ?`

// call_state is 0 for a turn that is not a prompt or tool call, or whose
// call ended (callEnded); 1 while a row of its span shows the call alive
// (callAlive, since {alive}): running; 2 after: interrupted. Two IN sets,
// not one scalar subquery of the calls not ended: ClickHouse 18.16 loses
// such a column over a Distributed table.
const selectTurns = `
SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       substring(content, 1, {content_bytes}) AS content_prefix, length(content) AS stored_bytes, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, ttft_ns,
       arraySlice(attributes.key, 1, ` + pageAttributesStr + `) AS attr_keys,
       arrayMap(v -> substringUTF8(v, 1, ` + pageAttributeRunesStr + `), arraySlice(attributes.value, 1, ` + pageAttributesStr + `)) AS attr_values,
       length(attributes.key) AS attr_total,
       multiIf(role NOT IN ('prompt', 'tool_call') OR span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE thread_id = {thread}
             AND ` + callEnded + `
       ), 0, span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE thread_id = {thread}
             AND greatest(start_ns, heartbeat_ns) >= {alive}
       ), 1, 2) AS call_state
FROM conversations
WHERE thread_id = {thread}{cond}` + orderTurns + `
LIMIT {limit}`

// turnsQuery is selectTurns of thread's turns that f lets through, the
// newest limit, of each contentBytes of content; a call alive since alive
// (Unix ns) is running.
func turnsQuery(thread string, f TurnFilter, alive uint64, limit, contentBytes int) sqlText {
	cond, condArgs := f.conditions(thread)
	return sqlf(selectTurns, holes{"content_bytes": arg(uint64(contentBytes)), "alive": arg(alive), "thread": arg(thread),
		"cond": {cond, condArgs}, "limit": arg(uint64(limit))})
}

// selectTurnCount counts the turns that pass the same conditions, each once.
const selectTurnCount = `
SELECT uniqExact(turn_id) AS matched
FROM conversations
WHERE thread_id = ?`

// The filters are fixed SQL with bound values, appended when asked for.
const (
	filterRole = `
  AND role = ?`
	filterSpeaker = `
  AND speaker = ?`
	filterSession = `
  AND session_id = ?`
	filterAgent = `
  AND agent = ?`
	filterTool = `
  AND tool_name = ?`
	filterTurn = `
  AND turn_id = ?`
	filterSpan = `
  AND span_id = ?`
	filterInternal = `
  AND internal = 0`
	filterFrom = `
  AND start_ns >= ?`
	filterTo = `
  AND start_ns <= ?`
	filterAfter = `
  AND start_ns > ?`
	filterChanged = `
  AND (start_ns > ? OR span_id IN ? OR parent_span_id IN ?)`
	filterQuery = `
  AND (positionCaseInsensitiveUTF8(content, ?) > 0 OR positionCaseInsensitiveUTF8(speaker, ?) > 0)`
	// The newest note of each turn decides, merged or not.
	filterStarred = `
  AND turn_id IN
  (
      SELECT turn_id
      FROM turn_notes
      WHERE thread_id = ?
      GROUP BY turn_id
      HAVING argMax(starred, updated_ns) = 1
  )`
	// Newest first, so that LIMIT keeps the newest turns; the caller
	// puts them back in the order they were said.
	orderTurns = `
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id`
)

// filterPhases matches any of n phases: one placeholder per phase asked
// for, never the phase itself in the SQL.
func filterPhases(n int) string {
	return `
  AND lowerUTF8(phase) IN (` + strings.TrimSuffix(strings.Repeat("lowerUTF8(?), ", n), ", ") + `)`
}

// conditions returns the SQL conditions of f and their arguments, in order.
func (f TurnFilter) conditions(threadID string) (string, []any) {
	var (
		b    strings.Builder
		args []any
	)
	add := func(sql string, vals ...any) {
		b.WriteString(sql)
		args = append(args, vals...)
	}
	if len(f.Phases) > 0 {
		phases := make([]any, len(f.Phases))
		for i, p := range f.Phases {
			phases[i] = p
		}
		add(filterPhases(len(f.Phases)), phases...)
	}
	if f.Role != "" {
		add(filterRole, f.Role)
	}
	if f.Speaker != "" {
		add(filterSpeaker, f.Speaker)
	}
	if f.Session != "" {
		add(filterSession, f.Session)
	}
	switch f.Agent {
	case "":
	case AgentMain:
		add(filterAgent, "")
	default:
		add(filterAgent, f.Agent)
	}
	if f.Tool != "" {
		add(filterTool, f.Tool)
	}
	if f.TurnID != "" {
		add(filterTurn, f.TurnID)
	}
	if f.SpanID != "" {
		add(filterSpan, f.SpanID)
	}
	if f.HideInternal {
		add(filterInternal)
	}
	if f.FromNS != 0 {
		add(filterFrom, f.FromNS)
	}
	if f.ToNS != 0 {
		add(filterTo, f.ToNS)
	}
	if f.Query != "" {
		add(filterQuery, f.Query, f.Query)
	}
	switch {
	case f.Changed == nil:
	case len(f.Changed.Spans) == 0:
		add(filterAfter, f.Changed.AfterNS)
	default:
		spans := ddl.Tuple(f.Changed.Spans)
		add(filterChanged, f.Changed.AfterNS, spans, spans)
	}
	if f.Starred {
		add(filterStarred, threadID)
	}
	return b.String(), args
}

// Turns returns the newest limit Turns of the thread that pass f, sorted by
// start time, then seq, with their notes; of each at most contentBytes of
// content. A thread without Turns yields none, not an error.
func (s Store) Turns(ctx context.Context, threadID string, f TurnFilter, limit, contentBytes int) ([]Turn, error) {
	q := turnsQuery(threadID, f, s.aliveSince(), limit, contentBytes)
	// The notes are read side by side with the turns.
	var (
		turns []Turn
		notes map[string]Note
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { notes, err = s.Notes(gctx, threadID); return err })
	g.Go(func() (err error) { turns, err = s.scanTurns(gctx, q.text, q.args); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.Reverse(turns)
	var prompts []storedPrompt
	for i := range turns {
		t := &turns[i]
		prompts = append(prompts, storedPrompt{threadID: t.ThreadID, history: t.History, content: &t.Content, cut: &t.ContentCut})
		if n, ok := notes[t.TurnID]; ok {
			t.Starred, t.Memo = n.Starred, n.Memo
		}
	}
	if f.LeaveHistory {
		return turns, nil
	}
	if err := s.joinHistory(ctx, prompts, contentBytes); err != nil {
		return nil, err
	}
	return turns, nil
}

// scanTurns runs selectTurns with its conditions and reads the turns.
func (s Store) scanTurns(ctx context.Context, query string, args []any) ([]Turn, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query turns: %w", err)
	}
	defer rows.Close()
	turns := []Turn{}
	for rows.Next() {
		var (
			t                  Turn
			stored, attrTotal  uint64
			truncated, state   uint8
			internal           uint8
			attrKeys, attrVals []string
		)
		err := rows.Scan(&t.TurnID, &t.TraceID, &t.SpanID, &t.ParentSpanID, &t.ParentTurnID, &t.Project,
			&t.ThreadID, &t.SessionID, &t.Phase, &t.Speaker, &t.Agent, &t.Round, &t.Role, &t.Seq,
			&t.Operation, &t.Provider, &t.Model, &t.ToolName, &t.ToolCallID,
			&t.Content, &stored, &t.History, &t.ContentBytes, &truncated, &internal,
			&t.TokensIn, &t.TokensOut, &t.TokensCacheRead, &t.TokensCacheWrite, &t.TokensReasoning, &t.CostUSD, &t.CostSource,
			&t.Status, &t.Error, &t.StartNS, &t.DurationNS, &t.TTFTNS, &attrKeys, &attrVals, &attrTotal, &state)
		if err != nil {
			return nil, fmt.Errorf("scan turn: %w", err)
		}
		t.Truncated, t.Internal, t.Running, t.Interrupted = truncated != 0, internal != 0, state == 1, state == 2
		if stored > uint64(len(t.Content)) {
			t.ContentCut = true
			t.Content = trimPartialRune(t.Content)
		}
		t.Attributes = attributeMap(attrKeys, attrVals)
		t.AttributesTotal = int(attrTotal)
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	return turns, nil
}

// trimPartialRune drops the bytes of a rune that a byte prefix cut in two.
func trimPartialRune(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

// countTurns counts the thread's turns that pass f.
func (s Store) CountTurns(ctx context.Context, threadID string, f TurnFilter) (int, error) {
	cond, condArgs := f.conditions(threadID)
	rows, err := s.db.Query(ctx, selectTurnCount+cond, append([]any{threadID}, condArgs...)...)
	if err != nil {
		return 0, fmt.Errorf("count turns: %w", err)
	}
	defer rows.Close()
	var n uint64
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("scan turn count: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read turn count: %w", err)
	}
	return int(n), nil
}

// Failed says whether the turn records a failure: an error row, or a
// failed status.
func (t Turn) Failed() bool { return t.Role == schema.RoleError || t.Status == schema.StatusError }
