package collector

import (
	"context"

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

// InsertRows writes rows with clickhouse-go batches and nothing else.
func InsertRows(ctx context.Context, conn BatchConn, turns []schema.Turn, spans []schema.Span) error {
	if err := insertColumns(ctx, conn, insertTurns, &schema.TurnBlock{}, each([][]schema.Turn{turns})); err != nil {
		return err
	}
	return insertColumns(ctx, conn, insertSpans, &schema.SpanBlock{}, each([][]schema.Span{spans}))
}
