package query

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// ExportFilter selects the threads an export holds: one thread, a
// project's, and those with a turn started in [FromNS, ToNS). A zero
// field selects all.
type ExportFilter struct {
	ThreadID, Project string
	FromNS, ToNS      uint64
}

// ThreadRecord is a thread as an export carries it: its id, its project
// and its thread_meta row, the newest (UpdatedNS 0: it has none).
type ThreadRecord struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Title     string `json:"title"`
	Archived  bool   `json:"archived"`
	Starred   bool   `json:"starred"`
	UpdatedNS uint64 `json:"updated_ns"`
}

// selectExportThreads lists the threads an ExportFilter selects, with
// their metadata, in id order: a GROUP BY that reads the thread and
// project columns only.
const selectExportThreads = `
SELECT thread_id, thread_project, meta_title, meta_archived, meta_starred, meta_updated
FROM
(
    SELECT thread_id, any(project) AS thread_project
    FROM conversations
    WHERE thread_id != ''%s
    GROUP BY thread_id
) AS c
ANY LEFT JOIN
(
    SELECT thread_id, argMax(title, updated_ns) AS meta_title, argMax(archived, updated_ns) AS meta_archived,
           argMax(starred, updated_ns) AS meta_starred, max(updated_ns) AS meta_updated
    FROM thread_meta
    GROUP BY thread_id
) AS m USING thread_id
ORDER BY thread_id`

// ExportThreads returns the threads f selects, in id order, without their
// turns: an export reads those thread by thread (ExportTurns).
func (s Store) ExportThreads(ctx context.Context, f ExportFilter) ([]ThreadRecord, error) {
	var cond strings.Builder
	var args []any
	if f.ThreadID != "" {
		cond.WriteString(" AND thread_id = ?")
		args = append(args, f.ThreadID)
	}
	if f.Project != "" {
		cond.WriteString(" AND project = ?")
		args = append(args, f.Project)
	}
	if f.FromNS != 0 || f.ToNS != 0 {
		to := f.ToNS
		if to == 0 {
			to = 1<<64 - 1
		}
		fromSec, toSec := schema.TSBounds(f.FromNS, to)
		cond.WriteString(" AND ts >= toDateTime(?) AND ts <= toDateTime(?) AND start_ns >= ? AND start_ns < ?")
		args = append(args, fromSec, toSec, f.FromNS, to)
	}
	rows, err := s.db.Query(ctx, fmt.Sprintf(selectExportThreads, cond.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("query export threads: %w", err)
	}
	defer rows.Close()
	var threads []ThreadRecord
	for rows.Next() {
		var (
			t                 ThreadRecord
			archived, starred uint8
		)
		if err := rows.Scan(&t.ID, &t.Project, &t.Title, &archived, &starred, &t.UpdatedNS); err != nil {
			return nil, fmt.Errorf("scan export thread: %w", err)
		}
		t.Archived, t.Starred = archived != 0, starred != 0
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read export threads: %w", err)
	}
	return threads, nil
}

// selectExportTurns reads a page of a thread's turns after a cursor
// (start_ns, turn_id), every column, the whole content: one copy of each
// turn, the highest revision, as every reader keeps.
const selectExportTurns = `
SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       content, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, heartbeat_ns, attributes.key, attributes.value, revision
FROM conversations
WHERE thread_id = ? AND (start_ns > ? OR (start_ns = ? AND turn_id > ?))
ORDER BY start_ns, turn_id, revision DESC
LIMIT 1 BY turn_id
LIMIT ?`

// ExportTurns calls fn with the thread's turns in pages of at most page,
// in the order they were said, every column as stored but for the
// content, which is whole: a prompt stored once is put back together as
// the viewer shows it, and its History is nil. Only a page is in memory
// at a time.
func (s Store) ExportTurns(ctx context.Context, threadID string, page int, fn func([]schema.Turn) error) error {
	var afterNS uint64
	var afterID string
	for {
		turns, err := s.exportPage(ctx, threadID, afterNS, afterID, page)
		if err != nil {
			return err
		}
		if len(turns) == 0 {
			return nil
		}
		prompts := make([]storedPrompt, len(turns))
		cut := false
		for i := range turns {
			t := &turns[i]
			prompts[i] = storedPrompt{threadID: t.ThreadID, history: t.History, content: &t.Content, cut: &cut}
		}
		if err := s.joinHistory(ctx, prompts, AllContent); err != nil {
			return err
		}
		for i := range turns {
			turns[i].History = nil
		}
		last := turns[len(turns)-1]
		if err := fn(turns); err != nil {
			return err
		}
		if len(turns) < page {
			return nil
		}
		afterNS, afterID = last.StartNS, last.TurnID
	}
}

func (s Store) exportPage(ctx context.Context, threadID string, afterNS uint64, afterID string, page int) ([]schema.Turn, error) {
	rows, err := s.db.Query(ctx, selectExportTurns, threadID, afterNS, afterNS, afterID, uint64(page))
	if err != nil {
		return nil, fmt.Errorf("query export turns: %w", err)
	}
	defer rows.Close()
	var turns []schema.Turn
	for rows.Next() {
		var (
			t                   schema.Turn
			truncated, internal uint8
			keys, values        []string
		)
		err := rows.Scan(&t.TurnID, &t.TraceID, &t.SpanID, &t.ParentSpanID, &t.ParentTurnID, &t.Project,
			&t.ThreadID, &t.SessionID, &t.Phase, &t.Speaker, &t.Agent, &t.Round, &t.Role, &t.Seq,
			&t.Operation, &t.Provider, &t.Model, &t.ToolName, &t.ToolCallID,
			&t.Content, &t.History, &t.ContentBytes, &truncated, &internal,
			&t.TokensIn, &t.TokensOut, &t.TokensCacheRead, &t.TokensCacheWrite, &t.TokensReasoning, &t.CostUSD,
			&t.CostSource, &t.Status, &t.Error, &t.StartNS, &t.DurationNS, &t.HeartbeatNS, &keys, &values, &t.Revision)
		if err != nil {
			return nil, fmt.Errorf("scan export turn: %w", err)
		}
		t.Truncated, t.Internal = truncated != 0, internal != 0
		t.Attributes = zipAttrs(keys, values)
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read export turns: %w", err)
	}
	return turns, nil
}

// exportSpanColumns are the columns of a spans row an export carries,
// in scanSpan's order.
const exportSpanColumns = `
SELECT trace_id, span_id, parent_span_id, project, thread_id, phase, round, speaker, agent, name, kind,
       start_ns, duration_ns, status, status_message, operation, provider, model, tokens_in, tokens_out, cost_usd,
       attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns
FROM spans`

// selectExportSpans reads the spans of traces, one copy of each: the
// trace is in the sort key.
const selectExportSpans = exportSpanColumns + `
WHERE trace_id IN ?
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id`

// selectStraySpans reads the spans that name one of a set of threads but
// belong to no trace of theirs that has a turn: one pass over the spans'
// thread column for the whole set.
const selectStraySpans = exportSpanColumns + `
WHERE thread_id IN ?
  AND trace_id NOT IN (SELECT DISTINCT trace_id FROM conversations WHERE thread_id IN ?)
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id`

// traceChunk is how many trace ids one read of spans asks for.
const traceChunk = 1000

// ExportSpans calls fn with each span of traces, as stored, one copy of
// each, one at a time: with StraySpans, every span a thread's pages show
// (its traces' spans, those of other threads and of none included) and
// every span that names it.
func (s Store) ExportSpans(ctx context.Context, traces []string, fn func(*schema.Span) error) error {
	for chunk := range slices.Chunk(traces, traceChunk) {
		if err := s.readSpans(ctx, selectExportSpans, fn, idTuple(chunk)); err != nil {
			return err
		}
	}
	return nil
}

// StraySpans returns, by thread, the spans that name one of threads but
// are in no trace with a turn of theirs, which ExportSpans does not read.
func (s Store) StraySpans(ctx context.Context, threads []string) (map[string][]schema.Span, error) {
	stray := map[string][]schema.Span{}
	if len(threads) == 0 {
		return stray, nil
	}
	err := s.readSpans(ctx, selectStraySpans, func(r *schema.Span) error {
		stray[r.ThreadID] = append(stray[r.ThreadID], *r)
		return nil
	}, idTuple(threads), idTuple(threads))
	return stray, err
}

func (s Store) readSpans(ctx context.Context, query string, fn func(*schema.Span) error, args ...any) error {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("query export spans: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r                  schema.Span
			keys, values       []string
			resKeys, resValues []string
		)
		err := rows.Scan(&r.TraceID, &r.SpanID, &r.ParentSpanID, &r.Project, &r.ThreadID, &r.Phase, &r.Round,
			&r.Speaker, &r.Agent, &r.Name, &r.Kind, &r.StartNS, &r.DurationNS, &r.Status, &r.StatusMsg,
			&r.Operation, &r.Provider, &r.Model, &r.TokensIn, &r.TokensOut, &r.CostUSD,
			&keys, &values, &resKeys, &resValues, &r.EventNames, &r.EventTimesNS)
		if err != nil {
			return fmt.Errorf("scan export span: %w", err)
		}
		r.Attributes, r.Resource = zipAttrs(keys, values), zipAttrs(resKeys, resValues)
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read export spans: %w", err)
	}
	return nil
}

// selectThreadsNotes reads the newest note of each turn of a set of
// threads.
const selectThreadsNotes = `
SELECT thread_id, turn_id, argMax(starred, updated_ns) AS note_starred, argMax(memo, updated_ns) AS note_memo,
       max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id IN ?
GROUP BY thread_id, turn_id
ORDER BY thread_id, turn_id`

// ExportNotes returns the newest note of each turn of threads, by thread,
// in turn id order.
func (s Store) ExportNotes(ctx context.Context, threads []string) (map[string][]Note, error) {
	notes := map[string][]Note{}
	if len(threads) == 0 {
		return notes, nil
	}
	rows, err := s.db.Query(ctx, selectThreadsNotes, idTuple(threads))
	if err != nil {
		return nil, fmt.Errorf("query export notes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			n       Note
			starred uint8
		)
		if err := rows.Scan(&n.ThreadID, &n.TurnID, &starred, &n.Memo, &n.UpdatedNS); err != nil {
			return nil, fmt.Errorf("scan export note: %w", err)
		}
		n.Starred = starred != 0
		notes[n.ThreadID] = append(notes[n.ThreadID], n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read export notes: %w", err)
	}
	return notes, nil
}

// zipAttrs pairs a Nested column's keys and values.
func zipAttrs(keys, values []string) []schema.Attr {
	attrs := make([]schema.Attr, min(len(keys), len(values)))
	for i := range attrs {
		attrs[i] = schema.Attr{Key: keys[i], Value: values[i]}
	}
	return attrs
}
