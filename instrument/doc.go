// Package instrument is the Go API a pipeline uses to record what its agents
// say. Each provider call becomes one OpenTelemetry span named
// "{operation} {model}" (OTel GenAI) carrying thread, phase, round, speaker,
// agent, provider, model, parent turn and provider session id as attributes,
// with a prompt event when the call starts and a response event when it ends.
// A failed call ends with error status and an exception event carrying the
// message.
//
// Call records a call that is one function; Start returns the open call
// (ActiveCall: AddTurn, End) for one that ends later, such as an HTTP
// response read by the client or a CLI agent's stream, and StartTool the
// open tool execution. Call is Start, the function and End.
//
// Thread, phase, round, speaker and agent usually come from the context
// (WithThread, WithPhase, WithRound, WithSpeaker, WithAgent); SpanProcessor
// stamps the same values on every span started in such a context, including
// spans of other instrumentations.
//
// The package only records spans; where they go is the tracer provider's
// business. collector.NewTracerProvider writes them to ClickHouse in-process.
//
// Its place in the whole is described in docs/architecture.md.
package instrument
