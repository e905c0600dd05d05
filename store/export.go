package store

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// ExportFilter selects the threads an export holds: one thread, a
// project's, and those with a turn started in [FromNS, ToNS). A zero
// field selects all.
type ExportFilter struct {
	ThreadID, Project string
	// ThreadIDs, when not empty, selects these threads only (a task's,
	// found with Store.ThreadIDs).
	ThreadIDs    []string
	FromNS, ToNS uint64
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
	// Turns counts the thread's rows, for an export to group threads by;
	// not exported.
	Turns uint64 `json:"-"`
}

// selectExportThreads lists the threads whose turns {cond} selects, with
// their metadata, in id order: a GROUP BY that reads the thread and
// project columns only.
const selectExportThreads = `
SELECT thread_id, thread_project, meta_title, meta_archived, meta_starred, meta_updated, thread_rows
FROM
(
    SELECT thread_id, any(project) AS thread_project, count() AS thread_rows
    FROM conversations
    WHERE {cond}
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
	q := sqlf(selectExportThreads, holes{"cond": f.cond()})
	rows, err := s.db.Query(ctx, q.text, q.args...)
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
		if err := rows.Scan(&t.ID, &t.Project, &t.Title, &archived, &starred, &t.UpdatedNS, &t.Turns); err != nil {
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

// cond is the condition on the turns of the threads f selects.
func (f ExportFilter) cond() sqlText {
	cs := []sqlText{raw("thread_id != ''")}
	if f.ThreadID != "" {
		cs = append(cs, ofThread(f.ThreadID))
	}
	if f.Project != "" {
		cs = append(cs, sqlf("project = {project}", holes{"project": arg(f.Project)}))
	}
	if len(f.ThreadIDs) > 0 {
		cs = append(cs, sqlf("thread_id IN {ids}", holes{"ids": arg(ddl.Tuple(f.ThreadIDs))}))
	}
	if f.FromNS != 0 || f.ToNS != 0 {
		to := f.ToNS
		if to == 0 {
			to = 1<<64 - 1
		}
		cs = append(cs, startedIn(f.FromNS, to))
	}
	return and(cs...)
}

// exportTurnColumns are every column of a conversations row, in
// scanExportTurn's order.
const exportTurnColumns = `
SELECT turn_id, trace_id, span_id, parent_span_id, parent_turn_id, project, thread_id, session_id,
       phase, speaker, agent, round, role, seq, operation, provider, model, tool_name, tool_call_id,
       content, history, content_bytes, truncated, internal,
       tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost_usd, cost_source,
       status, error, start_ns, duration_ns, ttft_ns, heartbeat_ns, attributes.key, attributes.value, revision
FROM conversations`

// selectExportTurns reads a page of a thread's turns after a cursor
// (start_ns, turn_id), every column, the whole content: one copy of each
// turn, the highest revision, as every reader keeps.
const selectExportTurns = exportTurnColumns + `
WHERE thread_id = ? AND (start_ns > ? OR (start_ns = ? AND turn_id > ?))
ORDER BY start_ns, turn_id, revision DESC
LIMIT 1 BY turn_id
LIMIT ?`

// selectGroupTurns reads the turns of a group of threads, thread by
// thread, in the order they were said: selectExportTurns for several
// threads in one query.
const selectGroupTurns = exportTurnColumns + `
WHERE thread_id IN ?
ORDER BY thread_id, start_ns, turn_id, revision DESC
LIMIT 1 BY thread_id, turn_id`

// ExportGroupTurns is ExportTurns for a group of threads in one query,
// thread by thread in id order; a page may hold the end of one thread and
// the start of the next. The server sorts the group's rows: a group is
// for threads of modest length together (an export bounds their sum), a
// long thread is read alone with ExportTurns.
func (s Store) ExportGroupTurns(ctx context.Context, threads []string, page int, fn func([]schema.Turn) error) error {
	// Blocks of a page: the rows stream, never more in memory.
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_block_size": page}))
	rows, err := s.db.Query(ctx, selectGroupTurns, ddl.Tuple(threads))
	if err != nil {
		return fmt.Errorf("query export turns: %w", err)
	}
	defer rows.Close()
	turns := make([]schema.Turn, 0, page)
	for rows.Next() {
		t, err := scanExportTurn(rows)
		if err != nil {
			return err
		}
		if turns = append(turns, t); len(turns) == page {
			if err := s.exportPage(ctx, turns, fn); err != nil {
				return err
			}
			turns = turns[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read export turns: %w", err)
	}
	if len(turns) == 0 {
		return nil
	}
	return s.exportPage(ctx, turns, fn)
}

// exportPage puts the page's prompts back together and hands it to fn.
func (s Store) exportPage(ctx context.Context, turns []schema.Turn, fn func([]schema.Turn) error) error {
	prompts := make([]storedPrompt, len(turns))
	cut := false
	for i := range turns {
		t := &turns[i]
		prompts[i] = storedPrompt{threadID: t.ThreadID, history: t.History, content: &t.Content, cut: &cut}
	}
	if err := s.joinHistory(ctx, prompts, AllContent); err != nil {
		return err
	}
	return fn(turns)
}

// ExportTurns calls fn with the thread's turns in pages of at most page, in
// the order said, every column as stored but the content, which is whole
// (docs/design/transfer.md). Only a page is in memory at a time.
func (s Store) ExportTurns(ctx context.Context, threadID string, page int, fn func([]schema.Turn) error) error {
	var afterNS uint64
	var afterID string
	for {
		turns, err := s.readPage(ctx, threadID, afterNS, afterID, page)
		if err != nil {
			return err
		}
		if len(turns) == 0 {
			return nil
		}
		last := turns[len(turns)-1]
		if err := s.exportPage(ctx, turns, fn); err != nil {
			return err
		}
		if len(turns) < page {
			return nil
		}
		afterNS, afterID = last.StartNS, last.TurnID
	}
}

// readPage reads the page of a thread's turns after a cursor.
func (s Store) readPage(ctx context.Context, threadID string, afterNS uint64, afterID string, page int) ([]schema.Turn, error) {
	rows, err := s.db.Query(ctx, selectExportTurns, threadID, afterNS, afterNS, afterID, uint64(page))
	if err != nil {
		return nil, fmt.Errorf("query export turns: %w", err)
	}
	defer rows.Close()
	var turns []schema.Turn
	for rows.Next() {
		t, err := scanExportTurn(rows)
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read export turns: %w", err)
	}
	return turns, nil
}

// scanExportTurn reads a row of selectExportTurns or selectGroupTurns.
func scanExportTurn(rows driver.Rows) (schema.Turn, error) {
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
		&t.CostSource, &t.Status, &t.Error, &t.StartNS, &t.DurationNS, &t.TTFTNS, &t.HeartbeatNS, &keys, &values, &t.Revision)
	if err != nil {
		return t, fmt.Errorf("scan export turn: %w", err)
	}
	t.Truncated, t.Internal = truncated != 0, internal != 0
	t.Attributes = zipAttrs(keys, values)
	return t, nil
}

// zipAttrs pairs a Nested column's keys and values.
func zipAttrs(keys, values []string) []schema.Attr {
	attrs := make([]schema.Attr, min(len(keys), len(values)))
	for i := range attrs {
		attrs[i] = schema.Attr{Key: keys[i], Value: values[i]}
	}
	return attrs
}
