package store

import (
	"context"
	"fmt"
	"iter"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// blockBytes bounds the values of one block of a columnar insert. The
// server squashes an insert's blocks into one part; the driver's column
// buffers grow to a block once and are reused, instead of growing to the
// whole batch in fresh memory every time.
const blockBytes = 64 << 10

// block is rows as typed columns: schema.TurnBlock, schema.SpanBlock.
type block[R any] interface {
	Add(*R)
	Bytes() int
	Columns() []any
	Reset()
}

// insertColumns sends rows as one insert of typed columns, in the order of
// the insert's column list, a block at a time: no value is boxed row by row.
func insertColumns[R any](ctx context.Context, conn BatchDB, query string, b block[R], rows iter.Seq[*R]) error {
	batch, err := conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare batch: %w", err)
	}
	defer batch.Close()
	cols := make([]driver.BatchColumn, len(b.Columns()))
	for i := range cols {
		cols[i] = batch.Column(i)
	}
	appendBlock := func() error {
		for i, col := range b.Columns() {
			if err := appendColumn(cols[i], col); err != nil {
				return fmt.Errorf("append column %d to batch: %w", i, err)
			}
		}
		b.Reset()
		return nil
	}
	for r := range rows {
		if b.Add(r); b.Bytes() < blockBytes {
			continue
		}
		if err := appendBlock(); err != nil {
			return err
		}
		if err := batch.Flush(); err != nil {
			return fmt.Errorf("flush block: %w", err)
		}
	}
	if err := appendBlock(); err != nil {
		return err
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("send batch: %w", err)
	}
	return nil
}

// appendColumn appends a typed column. An array column goes row by row:
// the driver appends a whole one by reflection, boxing every element.
func appendColumn(c driver.BatchColumn, col any) error {
	switch col := col.(type) {
	case [][]*string:
		return appendArrays(c, col)
	case [][]uint64:
		return appendArrays(c, col)
	}
	return c.Append(col)
}

func appendArrays[T any](c driver.BatchColumn, rows [][]T) error {
	for _, row := range rows {
		if err := c.AppendRow(row); err != nil {
			return err
		}
	}
	return nil
}

// each is every row of sets, in order.
func each[R any](sets [][]R) iter.Seq[*R] {
	return func(yield func(*R) bool) {
		for _, set := range sets {
			for i := range set {
				if !yield(&set[i]) {
					return
				}
			}
		}
	}
}
