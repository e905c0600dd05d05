// Package collector turns finished spans into conversation turns and writes
// them to ClickHouse.
//
// Mapping is pure: a span becomes one row of the spans table and, when it is
// a provider call or a tool execution, the turns of the conversations table:
// exactly one prompt row and one response row per call, or a prompt row and
// an error row when the call failed. Turn ids are deterministic, so a span
// delivered twice folds into the same rows.
//
// Exporter is an sdktrace.SpanExporter that maps spans and hands the rows to
// a background writer with a queue bounded in bytes: exporting never waits
// on ClickHouse. While ClickHouse fails the writer keeps the rows in a
// bounded buffer, spilling to a disk spool when given one (WithSpool), and
// stores them in order when it answers; storage errors are never returned
// to the pipeline. PendingProcessor writes
// the prompt of a call that is still running after a second, so a long call
// shows in the viewer while it runs, and refreshes it every minute as a
// heartbeat, so a call whose process died shows as interrupted.
// NewTracerProvider wires all of it for a Go pipeline that exports
// in-process. Before any row is queued, well-known secrets in it are
// replaced by [REDACTED:kind] (WithoutRedaction keeps them).
package collector
