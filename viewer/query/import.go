package query

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// An import (convtrace import, POST /api/import) stores only what the
// database does not hold yet: these queries tell it, a batch of ids at a
// time, and write the rows of the two tables a user changes as they were
// exported, their versions (updated_ns) kept. Turns and spans are stored
// through the collector's writer path (collector.RowStore).

// Batcher is what an import's inserts need of a connection.
type Batcher interface {
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

// RowKey names a row by two ids: (thread, turn) of a turn or a note,
// (trace, span) of a span.
type RowKey [2]string

const (
	selectStoredTurns = `
SELECT DISTINCT thread_id, turn_id
FROM conversations
WHERE thread_id IN ? AND turn_id IN ?`

	selectStoredSpans = `
SELECT DISTINCT trace_id, span_id
FROM spans
WHERE trace_id IN ? AND span_id IN ?`

	selectNoteVersions = `
SELECT thread_id, turn_id, max(updated_ns) AS note_updated
FROM turn_notes
WHERE thread_id IN ?
GROUP BY thread_id, turn_id`

	selectMetaVersions = `
SELECT thread_id, '' AS none, max(updated_ns) AS meta_updated
FROM thread_meta
WHERE thread_id IN ?
GROUP BY thread_id`

	insertNotes = "INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns)"
	insertMetas = "INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns)"
)

// StoredTurns returns which of the turns named by threads × turns
// conversations holds, by (thread, turn).
func (s Store) StoredTurns(ctx context.Context, threads, turns []string) (map[RowKey]bool, error) {
	return s.storedKeys(ctx, "turns", selectStoredTurns, threads, turns)
}

// StoredSpans returns which of the spans named by traces × spans the
// spans table holds, by (trace, span).
func (s Store) StoredSpans(ctx context.Context, traces, spans []string) (map[RowKey]bool, error) {
	return s.storedKeys(ctx, "spans", selectStoredSpans, traces, spans)
}

func (s Store) storedKeys(ctx context.Context, what, query string, a, b []string) (map[RowKey]bool, error) {
	stored := map[RowKey]bool{}
	if len(a) == 0 || len(b) == 0 {
		return stored, nil
	}
	rows, err := s.db.Query(ctx, query, idTuple(a), idTuple(b))
	if err != nil {
		return nil, fmt.Errorf("query stored %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k RowKey
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, fmt.Errorf("scan stored %s: %w", what, err)
		}
		stored[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read stored %s: %w", what, err)
	}
	return stored, nil
}

// NoteVersions returns the newest updated_ns of each note of threads, by
// (thread, turn).
func (s Store) NoteVersions(ctx context.Context, threads []string) (map[RowKey]uint64, error) {
	return s.versions(ctx, "note", selectNoteVersions, threads)
}

// MetaVersions returns the newest updated_ns of each of threads' metadata,
// by (thread, "").
func (s Store) MetaVersions(ctx context.Context, threads []string) (map[RowKey]uint64, error) {
	return s.versions(ctx, "thread meta", selectMetaVersions, threads)
}

func (s Store) versions(ctx context.Context, what, query string, threads []string) (map[RowKey]uint64, error) {
	versions := map[RowKey]uint64{}
	if len(threads) == 0 {
		return versions, nil
	}
	rows, err := s.db.Query(ctx, query, idTuple(threads))
	if err != nil {
		return nil, fmt.Errorf("query %s versions: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k RowKey
			v uint64
		)
		if err := rows.Scan(&k[0], &k[1], &v); err != nil {
			return nil, fmt.Errorf("scan %s version: %w", what, err)
		}
		versions[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s versions: %w", what, err)
	}
	return versions, nil
}

// InsertNotes writes notes as they are, updated_ns kept.
func InsertNotes(ctx context.Context, conn Batcher, notes []Note) error {
	return insertBatch(ctx, conn, "notes", insertNotes, len(notes), func(i int) []any {
		n := &notes[i]
		return []any{n.ThreadID, n.TurnID, boolUInt8(n.Starred), n.Memo, n.UpdatedNS}
	})
}

// InsertThreadMeta writes threads' metadata as it is, updated_ns kept.
func InsertThreadMeta(ctx context.Context, conn Batcher, threads []ThreadRecord) error {
	return insertBatch(ctx, conn, "thread meta", insertMetas, len(threads), func(i int) []any {
		t := &threads[i]
		return []any{t.ID, t.Title, boolUInt8(t.Archived), boolUInt8(t.Starred), t.UpdatedNS}
	})
}

// insertBatch sends n rows as one batch: prepare, append, send.
func insertBatch(ctx context.Context, conn Batcher, what, query string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	batch, err := conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare %s batch: %w", what, err)
	}
	defer batch.Close()
	for i := range n {
		if err := batch.Append(row(i)...); err != nil {
			return fmt.Errorf("append %s to batch: %w", what, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("send %s batch: %w", what, err)
	}
	return nil
}
