// Package cliagent records the run of a command-line agent, such as Claude
// Code or Codex, as conversation turns, without span code in the pipeline.
//
// Command runs the agent with its stdin, stdout and stderr passed through
// and records the run as an invoke_agent span: its gen_ai.prompt event is
// the prompt (from the arguments, or the piped stdin), stored by the
// collector's pending processor while the agent runs; its gen_ai.response
// event is the final answer; a run that exits non-zero or is killed ends
// the span with an error carrying the exit status and what the agent said
// went wrong (else the tail of stderr).
//
// The agent's stdout is read line by line as it streams:
//
//   - Claude Code --output-format stream-json (parseClaude) and codex exec
//     --json (codexParser) are turned into Events;
//   - each Claude Code API message is a provider call (calls.go): a chat
//     span under the run's (or under its sub-agent's Task tool span) with
//     its model, tokens, time to first token and answer (text and tool
//     uses), and no prompt turn of its own (Turn.Continues). The output
//     tokens come in the stream events, which Command asks for
//     (--include-partial-messages) and keeps from stdout when the caller
//     did not. The run then carries no usage, and its answer is its last
//     call's (Response.AnswerInCalls);
//   - a Codex run's usage is its turn's (turn.completed), the finest unit
//     its JSON reports, less the resumed session's earlier total (read
//     from its session file);
//   - each tool use becomes a child execute_tool span (the tool_call and
//     tool_result turns), started once the call that asked for it ended,
//     ended when the result with the same call id arrives, with an error
//     when the result is an error;
//   - the other events (system init, reasoning, todo lists, unparseable
//     lines, warnings such as session_resume_invalid and the errors of a
//     run that did not fail) become convtrace.turn events on the run span,
//     with the turn's role under convtrace.role, its content under
//     convtrace.content and a warning's code under convtrace.code;
//   - any other command's stdout is the response.
//
// The provider's session id (Claude session, Codex thread) is set as
// convtrace.session_id on the run span and every span after it as soon as
// it is known. The agent's own OpenTelemetry resource is marked
// (convtrace.recorded_by in OTEL_RESOURCE_ATTRIBUTES), so a collector that
// gets its telemetry too stores each call once.
package cliagent
