// Package mapping turns a span into the rows convtrace stores: one row of
// the spans table and, for a provider call or a tool execution, its turns
// in the conversations table — exactly one prompt row and one response
// row per call, or a prompt row and an error row when the call failed.
// It is pure: no I/O, no clock, no state.
//
// Span is the one shape it reads, whatever the span came from (FromSDK in
// process; the collector's OTLP decoder). mapping.go resolves the
// attribute contract; each convention has its own file: convtrace.go (the
// instrument package's events), genai.go (OTel GenAI), openllmetry.go,
// openinference.go, vercel.go (the Vercel AI SDK) and tools.go. logs.go
// joins GenAI log records to their span; onecall.go folds the spans of one
// call. Messages are read and written with schema/genai.
//
// Turn ids are deterministic, so a span delivered twice folds into the
// same rows.
//
// Its place in the whole is described in docs/architecture.md.
package mapping
