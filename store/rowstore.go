package store

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/schema"
)

// RowStore stores rows stored once already (an export read back) as the
// writer does, but neither redacts nor prices them and writes at once,
// returning the error for the caller to retry (docs/design/transfer.md).
// It is not safe for concurrent use.
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
