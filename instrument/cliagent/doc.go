// Package cliagent records the run of a command-line agent, such as Claude
// Code or Codex, as conversation turns, without span code in the pipeline.
//
// Command runs the agent with its stdin, stdout and stderr passed through
// byte for byte and records the run as one invoke_agent call span: its
// gen_ai.prompt event is the prompt (from the arguments, or the piped
// stdin), stored by the collector's pending processor while the agent runs;
// its gen_ai.response event is the final answer with the run's usage and
// cost; a run that exits non-zero or is killed ends the span with an error
// carrying the exit status and the tail of stderr.
//
// The agent's stdout is read line by line as it streams:
//
//   - Claude Code --output-format stream-json (parseClaude) and codex exec
//     --json (codexParser) are turned into Events;
//   - each tool use becomes a child execute_tool span (the tool_call and
//     tool_result turns), ended when the result with the same call id
//     arrives, with an error when the result is an error;
//   - the other events (system init, intermediate assistant text,
//     reasoning, todo lists, agent errors, unparseable lines, and the
//     session_resume_invalid warning) become convtrace.turn events on the
//     run span, with the turn's role under convtrace.role, its content
//     under convtrace.content and a warning's code under convtrace.code;
//   - any other command's stdout is the response.
//
// The provider's session id (Claude session, Codex thread) is set as
// convtrace.session_id on the run span and every tool span as soon as it
// is known.
package cliagent
