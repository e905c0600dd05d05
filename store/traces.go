package store

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/convtrace/convtrace/schema"
)

// CallRow is what the turns of one span add up to. A call that is still
// running has no row in spans yet (spans are written when they end), only
// its prompt in conversations: this is what the waterfall draws it from.
type CallRow struct {
	SpanID, ParentSpanID       string
	ThreadID, Phase, Speaker   string
	Agent                      string
	Round                      uint16
	Operation, Provider, Model string
	StartNS, EndNS             uint64
	Turns                      uint64
	TokensIn, TokensOut        *uint64
	CostUSD                    *float64
	Ended, Failed              bool
	Alive                      bool // a row of the span satisfies callAlive
	Error                      string
	// TTFTNS is the call's time to first token, 0 when unknown (not
	// streamed, or not reported).
	TTFTNS uint64
}

// selectTraceSpans reads a trace's spans; LIMIT 1 BY span_id keeps one copy
// of a span delivered twice, merged or not.
const selectTraceSpans = `
SELECT span_id, parent_span_id, name, kind, thread_id, phase, round, speaker, agent,
       start_ns, duration_ns, status, status_message, operation, provider, model,
       tokens_in, tokens_out, cost_usd
FROM spans
WHERE trace_id = {trace}
ORDER BY start_ns, span_id
LIMIT 1 BY span_id`

// traceTurns keeps the turns of {trace}, read through the threads
// trace_threads lists for it: trace_id is not in the key.
const traceTurns = `(project, thread_id) IN (SELECT project, thread_id FROM trace_threads WHERE trace_id = {trace})
      AND trace_id = {trace}`

// selectTraceCalls adds up a trace's turns by span without reading their
// content, one copy per turn; callAlive reads every copy, as the newest
// heartbeat may be in any (docs/design/queries.md).
const selectTraceCalls = `
SELECT span_id,
       any(parent_span_id) AS call_parent,
       anyIf(thread_id, thread_id != '') AS call_thread,
       anyIf(phase, phase != '') AS call_phase,
       anyIf(speaker, speaker != '') AS call_speaker,
       anyIf(agent, agent != '') AS call_agent,
       max(round) AS call_round,
       anyIf(operation, operation != '') AS call_operation,
       anyIf(provider, provider != '') AS call_provider,
       anyIf(model, model != '') AS call_model,
       min(start_ns) AS call_start,
       max(start_ns) AS call_end,
       count() AS call_turns,
       sum(tokens_in) AS call_in,
       sum(tokens_out) AS call_out,
       sum(cost_usd) AS call_cost,
       max(toUInt8(` + callEnded + `)) AS call_ended,
       max(toUInt8(role = 'error' OR status = 'error')) AS call_failed,
       anyIf(error, error != '') AS call_error,
       max(ttft_ns) AS call_ttft,
       toUInt8(span_id IN
       (
           SELECT span_id
           FROM conversations
           WHERE ` + traceTurns + `
             AND {alive}
       )) AS call_alive
FROM
(
    SELECT turn_id, span_id, parent_span_id, thread_id, phase, speaker, agent, round, operation, provider, model,
           start_ns, tokens_in, tokens_out, cost_usd, role, status, duration_ns, error, ttft_ns
    FROM conversations
    WHERE ` + traceTurns + `
    ORDER BY turn_id, revision DESC
    LIMIT 1 BY turn_id
)
GROUP BY span_id`

// selectTraceExists is 1 when the trace has a span or a turn, else 0.
const selectTraceExists = `
SELECT count() AS found
FROM
(
    SELECT 1 FROM spans WHERE trace_id = {trace} LIMIT 1
    UNION ALL
    SELECT 1 FROM conversations WHERE ` + traceTurns + ` LIMIT 1
)`

// selectSpanTurns reads the turns of {span} of {trace} in the order they
// were said, each with at most {runes} runes of its content.
const selectSpanTurns = `
SELECT turn_id, thread_id, role, seq, speaker, phase, model, tool_name, status, error,
       start_ns, duration_ns, tokens_in, tokens_out, cost_usd,
       substringUTF8(content, 1, {runes}) AS content_head,
       toUInt8(length(content) > length(content_head) OR truncated != 0) AS content_cut,
       content_bytes, history
FROM conversations
WHERE ` + traceTurns + ` AND span_id = {span}
ORDER BY start_ns, seq, turn_id, revision DESC
LIMIT 1 BY turn_id`

// traceCalls is selectTraceCalls of a trace, a call alive when heard
// from since aliveSince.
func traceCalls(traceID string, aliveSince uint64) sqlText {
	return sqlf(selectTraceCalls, holes{"trace": arg(traceID), "alive": sqlText{callAlive, []any{aliveSince}}})
}

// spanTurns is selectSpanTurns of a span of a trace.
func spanTurns(traceID, spanID string) sqlText {
	return sqlf(selectSpanTurns, holes{"trace": arg(traceID), "span": arg(spanID), "runes": arg(uint64(spanTurnRunes))})
}

// ofTrace fills the {trace} holes of a query of one trace.
func ofTrace(query, traceID string) sqlText { return sqlf(query, holes{"trace": arg(traceID)}) }

// spanTurnRunes is how much of a turn's content the trace page shows: about
// 2 KB, enough to recognise it; the thread page shows all of it.
const spanTurnRunes = 2000

// TraceRows returns a trace's spans and what its turns add up to by span.
func (s Store) TraceRows(ctx context.Context, traceID string) ([]schema.Span, []CallRow, error) {
	q := ofTrace(selectTraceSpans, traceID)
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query trace spans: %w", err)
	}
	var spans []schema.Span
	for rows.Next() {
		var r schema.Span
		if err := rows.Scan(&r.SpanID, &r.ParentSpanID, &r.Name, &r.Kind, &r.ThreadID, &r.Phase, &r.Round,
			&r.Speaker, &r.Agent, &r.StartNS, &r.DurationNS, &r.Status, &r.StatusMsg,
			&r.Operation, &r.Provider, &r.Model, &r.TokensIn, &r.TokensOut, &r.CostUSD); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("scan trace span: %w", err)
		}
		spans = append(spans, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read trace spans: %w", err)
	}

	q = traceCalls(traceID, s.aliveSince())
	rows, err = s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query trace calls: %w", err)
	}
	defer rows.Close()
	var calls []CallRow
	for rows.Next() {
		var (
			r                    CallRow
			ended, failed, alive uint8
		)
		if err := rows.Scan(&r.SpanID, &r.ParentSpanID, &r.ThreadID, &r.Phase, &r.Speaker, &r.Agent, &r.Round,
			&r.Operation, &r.Provider, &r.Model, &r.StartNS, &r.EndNS, &r.Turns,
			&r.TokensIn, &r.TokensOut, &r.CostUSD, &ended, &failed, &r.Error, &r.TTFTNS, &alive); err != nil {
			return nil, nil, fmt.Errorf("scan trace call: %w", err)
		}
		r.Ended, r.Failed, r.Alive = ended != 0, failed != 0, alive != 0
		calls = append(calls, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read trace calls: %w", err)
	}
	return spans, calls, nil
}

// SpanTurns returns the turns of one span of a trace, their content cut to
// spanTurnRunes runes.
func (s Store) SpanTurns(ctx context.Context, traceID, spanID string) ([]SpanTurn, error) {
	q := spanTurns(traceID, spanID)
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query span turns: %w", err)
	}
	defer rows.Close()
	turns := []SpanTurn{}
	for rows.Next() {
		var (
			t   SpanTurn
			cut uint8
		)
		if err := rows.Scan(&t.TurnID, &t.ThreadID, &t.Role, &t.Seq, &t.Speaker, &t.Phase, &t.Model, &t.ToolName,
			&t.Status, &t.Error, &t.StartNS, &t.DurationNS, &t.TokensIn, &t.TokensOut, &t.CostUSD,
			&t.Content, &cut, &t.ContentBytes, &t.History); err != nil {
			return nil, fmt.Errorf("scan span turn: %w", err)
		}
		t.ContentCut = cut != 0
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read span turns: %w", err)
	}
	prompts := make([]storedPrompt, len(turns))
	for i := range turns {
		t := &turns[i]
		prompts[i] = storedPrompt{threadID: t.ThreadID, history: t.History, content: &t.Content, cut: &t.ContentCut}
	}
	if err := s.joinHistory(ctx, prompts, utf8.UTFMax*spanTurnRunes); err != nil {
		return nil, err
	}
	for i := range turns {
		if t := &turns[i]; len(t.History) > 0 && utf8.RuneCountInString(t.Content) > spanTurnRunes {
			t.Content, t.ContentCut = string([]rune(t.Content)[:spanTurnRunes]), true
		}
	}
	return turns, nil
}

// TraceExists reports whether the trace has any span or turn.
func (s Store) TraceExists(ctx context.Context, traceID string) (bool, error) {
	return s.exists(ctx, "trace", ofTrace(selectTraceExists, traceID))
}

// SpanTurn is one turn of a span as the trace page lists it: its content
// cut to about 2 KB.
type SpanTurn struct {
	schema.Turn
	ContentCut bool `json:"content_cut"` // Content is not all of the turn
}
