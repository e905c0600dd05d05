package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// An export carries, of each thread, the spans its pages show (every span
// of the traces with a turn of it, of other threads and of none
// included) and every span that names it, and its notes.

// exportSpanColumns are the columns of a spans row an export carries,
// in scanSpan's order.
const exportSpanColumns = `
SELECT trace_id, span_id, parent_span_id, project, thread_id, phase, round, speaker, agent, name, kind,
       start_ns, duration_ns, status, status_message, operation, provider, model, tokens_in, tokens_out, cost_usd,
       attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns
FROM spans`

// selectExportSpans reads the spans of {traces}, one copy of each: the
// trace is in the sort key.
const selectExportSpans = exportSpanColumns + `
WHERE trace_id IN {traces}
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id`

// namingTraces is the traces with a span that names one of {threads}:
// spans are sorted by trace, not by thread.
const namingTraces = `(SELECT trace_id FROM thread_traces WHERE thread_id IN {threads})`

// selectStraySpans reads the spans that name one of {threads} but
// belong to no trace of theirs that has a turn, through the traces that
// hold them.
const selectStraySpans = exportSpanColumns + `
WHERE trace_id IN ` + namingTraces + `
  AND thread_id IN {threads}
  AND trace_id NOT IN (SELECT DISTINCT trace_id FROM conversations WHERE thread_id IN {threads})
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id`

// ExportSpans calls fn with each span of traces, as stored, one copy of
// each, one at a time: with StraySpans, every span a thread's pages show
// (its traces' spans, those of other threads and of none included) and
// every span that names it.
func (s Store) ExportSpans(ctx context.Context, traces []string, fn func(*schema.Span) error) error {
	for _, chunk := range IDChunks(traces) {
		if err := s.readSpans(ctx, sqlf(selectExportSpans, holes{"traces": arg(ddl.Tuple(chunk))}), fn); err != nil {
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
	err := s.readSpans(ctx, ofThreadGroup(selectStraySpans, threads), func(r *schema.Span) error {
		stray[r.ThreadID] = append(stray[r.ThreadID], *r)
		return nil
	})
	return stray, err
}

// selectGroupTraces lists the traces with a turn of each of a group of
// threads.
const selectGroupTraces = `
SELECT DISTINCT thread_id, trace_id
FROM conversations
WHERE thread_id IN ?`

// selectGroupSpans reads the spans the export of the group {threads}
// carries:
// those of the traces with a turn of one of them, and those that name one
// of them, in one query that reads only those traces.
const selectGroupSpans = exportSpanColumns + `
WHERE trace_id IN (SELECT DISTINCT trace_id FROM conversations WHERE thread_id IN {threads})
   OR trace_id IN ` + namingTraces + ` AND thread_id IN {threads}
ORDER BY trace_id, start_ns, span_id
LIMIT 1 BY trace_id, span_id`

// ExportGroupSpans returns, by thread, what ExportSpans and StraySpans
// read for each of a group of threads, in one pass over the spans and
// held in memory: for a group of threads of modest length, whose spans
// are read together rather than by a query each.
func (s Store) ExportGroupSpans(ctx context.Context, threads []string) (map[string][]schema.Span, error) {
	spans := map[string][]schema.Span{}
	if len(threads) == 0 {
		return spans, nil
	}
	rows, err := s.db.Query(ctx, selectGroupTraces, ddl.Tuple(threads))
	if err != nil {
		return nil, fmt.Errorf("query export traces: %w", err)
	}
	defer rows.Close()
	traces := map[string][]string{} // thread ids by trace
	for rows.Next() {
		var thread, trace string
		if err := rows.Scan(&thread, &trace); err != nil {
			return nil, fmt.Errorf("scan export trace: %w", err)
		}
		traces[trace] = append(traces[trace], thread)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read export traces: %w", err)
	}
	group := map[string]bool{}
	for _, id := range threads {
		group[id] = true
	}
	err = s.readSpans(ctx, ofThreadGroup(selectGroupSpans, threads), func(r *schema.Span) error {
		owners := traces[r.TraceID]
		for _, thread := range owners {
			spans[thread] = append(spans[thread], *r)
		}
		if group[r.ThreadID] && !slices.Contains(owners, r.ThreadID) {
			spans[r.ThreadID] = append(spans[r.ThreadID], *r)
		}
		return nil
	})
	return spans, err
}

// ofThreadGroup fills the {threads} holes of query with threads.
func ofThreadGroup(query string, threads []string) sqlText {
	return sqlf(query, holes{"threads": arg(ddl.Tuple(threads))})
}

func (s Store) readSpans(ctx context.Context, q sqlText, fn func(*schema.Span) error) error {
	rows, err := s.db.Query(ctx, q.text, q.args...)
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
	rows, err := s.db.Query(ctx, selectThreadsNotes, ddl.Tuple(threads))
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
