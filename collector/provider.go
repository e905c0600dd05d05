package collector

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// TracerProvider is the SDK's tracer provider that NewTracerProvider
// builds, with its exporter's Stats.
type TracerProvider struct {
	*sdktrace.TracerProvider
	exp *Exporter
}

// Stats reports what happened to the rows of the spans ended so far.
func (tp *TracerProvider) Stats() Stats { return tp.exp.Stats() }

// NewTracerProvider returns a tracer provider for a Go pipeline that
// exports in-process: spans go straight to the ClickHouse database named by
// dsn (empty: the local store, see NewExporter), stamped with the context's thread, phase, round, speaker and agent,
// with early prompts for long calls. Shut it down to flush.
func NewTracerProvider(dsn string, opts ...ProviderOption) (*TracerProvider, error) {
	cfg, err := configure(opts, ProviderOption.applyProvider)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(dsn, cfg)
	if err != nil {
		return nil, err
	}
	pending := newPendingProcessor(exp, cfg)
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String(schema.KeyServiceName, cfg.project),
		attribute.String(schema.KeyProject, cfg.project),
	))
	if err != nil {
		return nil, err
	}
	return &TracerProvider{TracerProvider: sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()),
		sdktrace.WithSpanProcessor(pending),
		// The exporter only hands spans to the writer, which maps them on
		// its goroutine: a synchronous processor adds a queue send and no
		// batching delay of its own.
		sdktrace.WithSyncer(exp),
	), exp: exp}, nil
}
