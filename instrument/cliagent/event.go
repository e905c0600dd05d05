package cliagent

import (
	"bytes"
	"encoding/json"

	"github.com/convtrace/convtrace/instrument"
)

// Kinds of Event: the role of the turn each becomes.
const (
	KindSession         = "session"           // only the provider session id
	KindSystem          = "system"            // session start: model, tools
	KindResponse        = "response"          // assistant text
	KindReasoning       = "reasoning"         // the model's reasoning summary
	KindToolCall        = "tool_call"         // a tool use, paired by CallID
	KindToolResult      = "tool_result"       // its result
	KindToolResultError = "tool_result_error" // its result, failed
	KindTodoList        = "todo_list"         // the agent's plan
	KindResult          = "result"            // the run's final answer and usage
	KindError           = "error"             // the agent reported a failure
	KindUnknown         = "unknown"           // a line that could not be parsed
	KindWarning         = "warning"           // see Code

	// The stream of a provider call (Claude Code's stream events): its
	// start, with model, input and cache tokens and, in DurationMS, the
	// time to its first token; its output tokens and stop reason
	// (Content); its end. They become no turn of their own: the call's
	// span.
	KindCallStart = "call_start"
	KindCallUsage = "call_usage"
	KindCallEnd   = "call_end"
)

// CodeAgentWarning is the Code of a warning the agent reported and went on
// after: it is no failure.
const CodeAgentWarning = "agent_warning"

// CodeUsageCumulative is the Code of the warning of a resumed Codex run
// whose usage could not be told from the session's earlier turns'.
const CodeUsageCumulative = "usage_cumulative"

// CodeSessionResumeInvalid is the Code of the warning an agent gets when
// the session it was told to resume does not exist, so a pipeline can retry
// without resuming.
const CodeSessionResumeInvalid = "session_resume_invalid"

// CodeResumeRetry is the Code of the note that opens a run retried without
// resuming after the agent rejected the session (WithRetryAfterRejected).
const CodeResumeRetry = "resume_retry"

// CodeResumeFailedUnrecognised is the Code of the warning of a resumed run
// that failed with no message a matcher knows: maybe a rejected session in
// words this version does not recognise.
const CodeResumeFailedUnrecognised = "resume_failed_unrecognised"

// Event is one logical event of an agent's output, as a parser reads it
// from one line.
type Event struct {
	Kind      string
	SessionID string
	Model     string
	Content   string // text, tool input or output, the raw line for unknown
	ToolName  string
	CallID    string
	Code      string // for warnings
	Rejected  string // of a session_resume_invalid or resume_retry warning: the session the agent refused
	// ParentToolUseID is the Task tool use of the sub-agent that said
	// this (Claude Code), "" for the main agent; Agent is that
	// sub-agent's name, set by the run.
	ParentToolUseID string
	Agent           string
	// MessageID is the provider's id of the answer this event is part of
	// (one provider call), RequestID the id of its request, when known.
	MessageID string
	RequestID string

	// Set on KindResult, and on the events of a provider call.
	Usage      *instrument.Usage
	CostUSD    *float64
	DurationMS int64
	IsError    bool
}

// compact returns raw JSON without insignificant space, or raw itself when
// it is not valid JSON.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func unknown(line []byte) []Event {
	return []Event{{Kind: KindUnknown, Content: string(line)}}
}
