package collector

import (
	"context"
	"strings"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
)

// RowsOf maps OTLP spans to rows the way the ingester does, for the
// benchmark that compares ingest with plain clickhouse-go inserts.
func RowsOf(rss []*tracepb.ResourceSpans) ([]schema.Turn, []schema.Span) {
	var turns []schema.Turn
	var rows []schema.Span
	for _, s := range spansFromOTLP(rss) {
		turns = append(turns, mapping.Turns(s)...)
		row, _ := mapping.SpanRow(s)
		rows = append(rows, row)
	}
	return turns, rows
}

// InsertRows writes rows with clickhouse-go batches of typed columns and
// nothing else.
func InsertRows(ctx context.Context, conn BatchConn, turns []schema.Turn, spans []schema.Span) error {
	var tb schema.TurnBlock
	for i := range turns {
		tb.Add(&turns[i])
	}
	var sb schema.SpanBlock
	for i := range spans {
		sb.Add(&spans[i])
	}
	if err := sendColumns(ctx, conn, "conversations", schema.TurnColumns, tb.Columns()); err != nil {
		return err
	}
	return sendColumns(ctx, conn, "spans", schema.SpanColumns, sb.Columns())
}

func sendColumns(ctx context.Context, conn BatchConn, table string, names []string, cols []any) error {
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+strings.Join(names, ", ")+")")
	if err != nil {
		return err
	}
	defer batch.Close()
	for i, col := range cols {
		if err := batch.Column(i).Append(col); err != nil {
			return err
		}
	}
	return batch.Send()
}
