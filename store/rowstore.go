package store

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// RowStore stores rows that were stored once already, such as those of an
// export read back by convtrace import, the way the writer stores rows:
// each prompt's history split off once into messages, the past days of
// the turns marked stale for the cost summaries, the turns as typed
// columns. Unlike the writer it neither redacts nor prices them, so that
// every value comes back as it was, and it writes at once, in the
// caller's goroutine, returning the error: the caller retries.
//
// A RowStore is not safe for concurrent use: it remembers the history
// messages it stored, so that a long thread stored in several calls
// stores each message once.
type RowStore struct {
	db      BatchDB
	history History
}

// NewRowStore returns a RowStore writing to db, a connection to a
// migrated convtrace database.
func NewRowStore(db BatchDB) *RowStore { return &RowStore{db: db} }

// Store writes turns and spans; either may be empty.
func (s *RowStore) Store(ctx context.Context, turns []schema.Turn, spans []schema.Span) error {
	if len(turns) > 0 {
		err := WriteTurns(ctx, s.db, &s.history, [][]schema.Turn{turns}, func(do func() error) error {
			if err := do(); err != nil {
				return fmt.Errorf("write conversations: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(spans) > 0 {
		if err := InsertSpans(ctx, s.db, spans); err != nil {
			return fmt.Errorf("write spans: %w", err)
		}
	}
	return nil
}
