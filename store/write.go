package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/schema"
)

// BatchDB is what writing rows needs of a connection: a clickhouse-go
// driver.Conn and a topology.Conn satisfy it.
type BatchDB interface {
	DB
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

var (
	insertTurns  = "INSERT INTO conversations (" + strings.Join(schema.TurnColumns, ", ") + ")"
	insertSpans  = "INSERT INTO spans (" + strings.Join(schema.SpanColumns, ", ") + ")"
	insertStaged = "INSERT INTO join_staging (" + strings.Join(schema.StagedColumns, ", ") + ")"
	insertMsgs   = "INSERT INTO messages (" + strings.Join(schema.MessageColumns, ", ") + ")"
)

// WriteTurns stores turns in order, within a Change of their past days:
// first the history their prompts repeat that h has not seen stored (so
// no reader meets a reference to a message that is not there), then the
// turns as typed columns through insert, which may time or count the
// insert. Every path that stores turns goes through it.
func WriteTurns(ctx context.Context, db BatchDB, h *History, turns [][]schema.Turn,
	insert func(do func() error) error) error {
	splits, msgs := h.split(turns)
	if len(msgs) > 0 {
		if err := insertRows(ctx, db, insertMsgs, (*schema.StoredMessage).Values, msgs); err != nil {
			return fmt.Errorf("write messages: %w", err)
		}
		h.add(msgs)
	}
	change, err := Begin(ctx, db, Change{Days: summarizedDays(turns, time.Now())})
	if err != nil {
		return err
	}
	err = insert(func() error {
		return insertColumns(ctx, db, insertTurns, &schema.TurnBlock{}, withSplits(turns, splits))
	})
	if err != nil {
		return err
	}
	return change.Done(ctx)
}

// InsertSpans stores spans rows as one insert. Spans feed no summary.
func InsertSpans(ctx context.Context, db BatchDB, sets ...[]schema.Span) error {
	return insertColumns(ctx, db, insertSpans, &schema.SpanBlock{}, each(sets))
}

// InsertStaged stores join_staging rows as one insert.
func InsertStaged(ctx context.Context, db BatchDB, sets ...[]schema.Staged) error {
	return insertRows(ctx, db, insertStaged, (*schema.Staged).Values, sets...)
}

// insertRows sends rows as one batch: prepare, append, send, each error
// wrapped with its step.
func insertRows[R any](ctx context.Context, db BatchDB, query string, values func(*R) []any, sets ...[]R) error {
	batch, err := db.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare batch: %w", err)
	}
	defer batch.Close()
	for _, rows := range sets {
		for i := range rows {
			if err := batch.Append(values(&rows[i])...); err != nil {
				return fmt.Errorf("append to batch: %w", err)
			}
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("send batch: %w", err)
	}
	return nil
}
