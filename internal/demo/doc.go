// Package demo is the conversation `convtrace demo` records: a multi-agent
// coding pipeline fixing a TypeError in a TypeScript project, run against a
// local fake provider, so a fresh install has a realistic thread to show.
//
// Provider is an http.Handler that fakes an OpenAI-compatible chat
// completions API in the real wire format, answering each agent from a
// script; StartProvider serves it on a local port. Client is a small
// chat completions client over net/http. Run drives the pipeline — dual
// plan (two planners, two critics, an adjudicator), review, a revision
// round, an executor that calls tools, and a verifier whose first attempt
// is refused with 529 overloaded and retried — recording every provider
// call with instrument.Recorder.Call and every tool execution with
// instrument.Recorder.Tool on a new thread.
//
// The pipeline is the demo's, not a framework: its agents, prompts and
// replies are fixed. Where its spans go is the recorder's tracer
// provider's business; collector.NewTracerProvider stores them in
// ClickHouse.
package demo
