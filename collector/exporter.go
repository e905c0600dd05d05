package collector

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/store/localstore"
	"github.com/convtrace/convtrace/store/topology"
)

// Exporter is an sdktrace.SpanExporter that stores spans and their
// conversation turns in ClickHouse. ExportSpans never waits on ClickHouse
// and never returns a storage error: rows it cannot store yet are kept,
// spooled (WithSpool) or dropped and counted in Stats (docs/design/writer.md).
type Exporter struct {
	w *writer
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// NewExporter returns an exporter writing to the ClickHouse database named by
// dsn (a clickhouse-go DSN such as clickhouse://127.0.0.1:9000/convtrace);
// an empty dsn names the local store `convtrace serve` starts, an error when
// it was never started. It connects lazily, so ClickHouse may be down.
func NewExporter(dsn string, opts ...ExporterOption) (*Exporter, error) {
	cfg, err := configure(opts, ExporterOption.applyExporter)
	if err != nil {
		return nil, err
	}
	return newExporter(dsn, cfg)
}

func newExporter(dsn string, cfg config) (*Exporter, error) {
	var err error
	if dsn == "" {
		if dsn, err = localstore.DSN(localstore.Dir()); err != nil {
			return nil, err
		}
	}
	if _, err := topology.Parse(dsn); err != nil {
		return nil, err
	}
	return &Exporter{w: newWriter(dialDSN(dsn), cfg)}, nil
}

// ExportSpans hands spans to the writer, which maps them to rows and
// stores them: the pipeline's span.End pays for the hand-over only (and,
// with WithDurableSpool, for mapping them and a synced write). It is safe
// for concurrent use and returns nil unless ctx is already done.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, size := estimate(spans)
	e.w.write(item{sdk: spans, sdkRows: rows, sdkSize: size})
	return nil
}

// estimate approximates the rows spans map to (a spans row each and about
// a turn per event) and the memory they hold, without mapping them.
func estimate(spans []sdktrace.ReadOnlySpan) (rows, size int64) {
	for _, ro := range spans {
		rows++
		size += rowOverhead + attrsSize(ro.Attributes())
		for _, e := range ro.Events() {
			rows++
			size += rowOverhead + attrsSize(e.Attributes)
		}
	}
	return rows, size
}

func attrsSize(kvs []attribute.KeyValue) int64 {
	var n int
	for _, kv := range kvs {
		n += len(kv.Key)
		if kv.Value.Type() == attribute.STRING {
			n += len(kv.Value.AsString())
		} else {
			n += 8
		}
	}
	return int64(n)
}

// rowsOf maps SDK spans to their rows, counting the invalid usage values
// stored as unknown.
func rowsOf(sdk *mapping.SDKReader, spans []sdktrace.ReadOnlySpan) (rows, int64) {
	var (
		r         rows
		sanitised int64
	)
	mapped := make([]mapping.Span, 0, 1) // on the stack for the one span of the synchronous exporter
	for _, ro := range spans {
		mapped = append(mapped, sdk.Span(ro))
	}
	mapping.FoldCalls(mapped)
	for _, s := range mapped {
		turns, row, n := mapping.Rows(s)
		if r.Turns == nil {
			r.Turns = turns // one span, as the synchronous exporter hands over: not copied
		} else {
			r.Turns = append(r.Turns, turns...)
		}
		r.Spans = append(r.Spans, row)
		sanitised += int64(n)
	}
	return r, sanitised
}

// ForceFlush waits until every span exported so far has been written or
// kept for a retry, or ctx ends.
func (e *Exporter) ForceFlush(ctx context.Context) error { return e.w.flush(ctx) }

// Shutdown writes what is queued and kept, making one last attempt, spools
// what ClickHouse does not take (WithSpool) and stops the exporter. Spans
// exported after it are dropped. It is safe to call more than once.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.w.shutdown(ctx) }

// Stats reports what happened to the rows exported so far.
func (e *Exporter) Stats() Stats { return e.w.stats() }
