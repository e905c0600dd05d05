// Package agentcheck runs the real Claude Code and Codex CLIs against a
// scripted fake model provider on loopback and records the OpenTelemetry
// they export, so that convtrace's mapping of agent telemetry can be
// checked against what the agents really send.
//
// Pieces:
//
//   - FakeProvider (fakeprovider.go) serves the Anthropic Messages API
//     (POST /v1/messages, streamed or not) and the OpenAI Responses API
//     (POST /v1/responses, streamed) on 127.0.0.1. The first model call of a
//     conversation gets a shell tool call running Script.Command, the call
//     after the tool result gets Script.FinalText, with fixed token usage.
//     Every request is kept for inspection.
//   - testkit.OTLPCapture receives what the CLIs export, strictly decoded,
//     and writes it as OTLP/JSON with hex trace and span ids.
//   - RunClaude and RunCodex (run.go) run the CLIs installed by npm in
//     this folder (package.json pins the versions; `npm ci` installs them)
//     in a temporary HOME, with telemetry and content logging on and a
//     time bound.
//   - BlackholeProxy and ReexecInNetNS keep the CLIs off the network: the
//     package's tests re-run themselves in a network namespace with only
//     loopback when they can (root on Linux).
//   - LogEvents, Spans and MetricPoints (query.go) flatten captured
//     requests for assertions.
//
// The tests skip when node_modules is missing, unless
// CONVTRACE_REQUIRE_AGENTS=1. TestRecordFixtures re-records
// collector/testdata/recorded/agents when CONVTRACE_AGENTCHECK_RECORD is set.
package agentcheck
