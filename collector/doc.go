// Package collector stores spans in ClickHouse: the in-process path of a
// Go pipeline and the OTLP path of every other, through one writer.
//
//   - In process: NewTracerProvider wires the Exporter (an
//     sdktrace.SpanExporter that maps spans and queues their rows: exporting
//     never waits on ClickHouse) and the PendingProcessor (which stores the
//     prompt of a call still running after a second, then again every
//     minute as a heartbeat, so a call whose process died shows as
//     interrupted).
//   - OTLP: the Ingester maps each request's spans and answers only once
//     their rows are stored. A GenAI call whose content comes as log
//     records is staged in join_staging until its span and records meet
//     (staging.go, stager.go). otlpreceiver serves it over HTTP and gRPC.
//   - One writer (writer.go, store.go) redacts (redact.go), prices
//     (package pricing) and inserts in group commits. While ClickHouse
//     fails it keeps the rows in a bounded buffer, spilling to a disk spool
//     (WithSpool; spool.go, spoolrecord.go), or journals every row to the
//     spool before queueing it (WithDurableSpool); storage errors are never
//     returned to the pipeline.
//
// What a span becomes is package mapping's. Each constructor takes the
// options that apply to it (config.go).
//
// Its place in the whole is described in docs/architecture.md.
package collector
