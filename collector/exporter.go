package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/localstore"
	"github.com/convtrace/convtrace/store/topology"
)

// Exporter is an sdktrace.SpanExporter that stores spans and their
// conversation turns in ClickHouse. ExportSpans never waits on ClickHouse
// and never returns a storage error: rows it cannot store yet are kept,
// spooled (WithSpool) or dropped and counted in Stats (docs/design/writer.md).
type Exporter struct {
	w     *writer
	local *chserver.Server // the local store's server, when this exporter started it
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// NewExporter returns an exporter writing to the ClickHouse database named by
// dsn (a clickhouse-go DSN such as clickhouse://127.0.0.1:9000/convtrace);
// an empty dsn names the local store, whose ClickHouse it starts unless it
// runs (as convtrace run does; Shutdown stops it) and whose spool keeps
// what Shutdown could not store, for the next serve or run. It connects
// lazily, so ClickHouse may be down.
func NewExporter(dsn string, opts ...ExporterOption) (*Exporter, error) {
	cfg, err := configure(opts, ExporterOption.applyExporter)
	if err != nil {
		return nil, err
	}
	return newExporter(dsn, cfg)
}

func newExporter(dsn string, cfg config) (*Exporter, error) {
	var local *chserver.Server
	if dsn == "" {
		var err error
		if dsn, local, err = localStore(&cfg); err != nil {
			return nil, err
		}
	}
	if _, err := topology.Parse(dsn); err != nil {
		return nil, err
	}
	return &Exporter{w: newWriter(dialDSN(dsn), cfg), local: local}, nil
}

// localStartTimeout bounds how long NewExporter waits for the local
// store's ClickHouse to start.
const localStartTimeout = time.Minute

// localStore returns the local store's DSN, starting its server unless one
// runs (the server, when this process started it), and spools in the
// store's folder unless cfg names a spool. A server that does not start
// leaves the rows to the spool.
func localStore(cfg *config) (string, *chserver.Server, error) {
	data := localstore.Dir()
	if cfg.spoolDir == "" {
		cfg.spoolDir = localstore.SpoolDir(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), localStartTimeout)
	defer cancel()
	srv, err := chserver.Ensure(ctx, localstore.ClickHouseDir(data))
	if err != nil {
		dsn, dsnErr := localstore.DSN(data)
		if dsnErr != nil {
			return "", nil, fmt.Errorf("start the local store's ClickHouse in %s: %w", data, err)
		}
		cfg.logger.Warn("convtrace: the local store's ClickHouse did not start; rows not stored by Shutdown are spooled for the next convtrace serve or run",
			"err", err, "spool", cfg.spoolDir)
		return dsn, nil, nil
	}
	dsn := srv.DSN(topology.DefaultDatabase)
	if !srv.Owned() {
		return dsn, nil, nil
	}
	return dsn, srv, nil
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
func (e *Exporter) Shutdown(ctx context.Context) error {
	err := e.w.shutdown(ctx)
	if e.local != nil {
		err = errors.Join(err, e.local.Stop(ctx))
	}
	return err
}

// Stats reports what happened to the rows exported so far.
func (e *Exporter) Stats() Stats { return e.w.stats() }
