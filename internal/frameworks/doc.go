// Package frameworks drives real third-party JavaScript GenAI
// instrumentations (LangChain with OpenInference, openlit, Mastra, OpenAI
// Agents with OpenInference, Logfire, Traceloop, the OTel OpenAI
// instrumentation, the Vercel AI SDK, …) against a fake model provider, so
// that convtrace can be tested call by call against what those libraries
// really send.
//
// Every source runs the same scenario (see Scenario): a "planner" agent asks
// the model, which answers with one call of the tool lookup_weather
// {"city":"Paris"}; the tool returns "sunny, 21C"; the planner's second call
// carries the tool result and is answered "Plan: go outside."; then a
// "critic" agent makes one call answered "Looks fine.". That is three
// provider calls and one tool call, under the thread (session) id
// "fw-<source>".
//
// The pieces:
//
//   - Provider (fakeprovider.go) is a fake OpenAI Chat Completions
//     (/v1/chat/completions), OpenAI Responses (/v1/responses) and Anthropic
//     Messages (/v1/messages) endpoint, streamed and not. It picks its answer
//     from the request alone, with fixed, distinct token usage per answer
//     (ToolCallUsage, PlanUsage, CriticUsage).
//   - testkit.OTLPCapture receives what a source exports, and hands traces
//     and logs on to convtrace's receiver.
//   - RunSource runs one source's Node script, js/<source>/index.mjs, with
//     OPENAI_BASE_URL, ANTHROPIC_BASE_URL and OTEL_EXPORTER_OTLP_ENDPOINT
//     pointing at the fake provider and an OTLP receiver, and a preloaded
//     guard (js/guard.cjs) that refuses any connection or DNS lookup that is
//     not loopback.
//
// The Node packages are pinned in package.json and package-lock.json (one
// npm workspace per source under js/); `npm ci` in this folder installs
// them. Without node_modules the tests skip, unless
// CONVTRACE_REQUIRE_FRAMEWORKS=1 makes that a failure.
//
// CONVTRACE_FRAMEWORKS_CAPTURE=1 go test ./internal/frameworks -run Capture
// rewrites collector/testdata/recorded/frameworks/<source>/run.traces.json
// and run.logs.json from a fresh run of every source.
package frameworks
