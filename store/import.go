package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/convtrace/convtrace/store/ddl"
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

// MaxListBytes bounds the ids one query names: an IN list is bound into
// the query's text, which the server parses up to max_query_size (256 KiB
// by default). A caller with more splits them (IDChunks).
const MaxListBytes = 64 << 10

// IDChunks splits ids into runs that each fit one query's list.
func IDChunks(ids []string) [][]string {
	return chunks(ids, func(id string) int { return len(id) })
}

// chunks splits items into runs of at most MaxListBytes of ids, size
// telling an item's.
func chunks[T any](items []T, size func(T) int) [][]T {
	var (
		out   [][]T
		start int
		bytes int
	)
	for i, it := range items {
		n := size(it) + 4 // quotes, comma, space
		if i > start && bytes+n > MaxListBytes {
			out = append(out, items[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(items) {
		out = append(out, items[start:])
	}
	return out
}

// StoredTurns returns which of the turns named by keys (thread, turn)
// conversations holds.
func (s Store) StoredTurns(ctx context.Context, keys []RowKey) (map[RowKey]bool, error) {
	return s.storedKeys(ctx, "turns", selectStoredTurns, keys)
}

// StoredSpans returns which of the spans named by keys (trace, span) the
// spans table holds.
func (s Store) StoredSpans(ctx context.Context, keys []RowKey) (map[RowKey]bool, error) {
	return s.storedKeys(ctx, "spans", selectStoredSpans, keys)
}

// storedKeys asks which of keys a table holds, a run of keys at a time:
// the rows whose first id is one of the run's and whose second is too,
// kept when the pair is one of keys.
func (s Store) storedKeys(ctx context.Context, what, query string, keys []RowKey) (map[RowKey]bool, error) {
	stored := map[RowKey]bool{}
	for _, run := range chunks(keys, func(k RowKey) int { return len(k[0]) + len(k[1]) }) {
		var firsts, seconds []string
		for _, k := range run {
			firsts, seconds = append(firsts, k[0]), append(seconds, k[1])
		}
		slices.Sort(firsts)
		slices.Sort(seconds)
		rows, err := s.db.Query(ctx, query, ddl.Tuple(slices.Compact(firsts)), ddl.Tuple(slices.Compact(seconds)))
		if err != nil {
			return nil, fmt.Errorf("query stored %s: %w", what, err)
		}
		for rows.Next() {
			var k RowKey
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan stored %s: %w", what, err)
			}
			stored[k] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read stored %s: %w", what, err)
		}
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
	for _, run := range IDChunks(threads) {
		rows, err := s.db.Query(ctx, query, ddl.Tuple(run))
		if err != nil {
			return nil, fmt.Errorf("query %s versions: %w", what, err)
		}
		for rows.Next() {
			var (
				k RowKey
				v uint64
			)
			if err := rows.Scan(&k[0], &k[1], &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan %s version: %w", what, err)
			}
			versions[k] = v
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s versions: %w", what, err)
		}
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
