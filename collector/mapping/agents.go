package mapping

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// Claude Code's and Codex's own log records, joined per Claude Code prompt
// or Codex conversation: a call per provider request, a tool call per tool
// run, a thread per session; their spans make no turns
// (docs/design/mapping.md, "Claude Code and Codex").

// Record names (normalized: Claude Code's attribute event.name lacks the
// prefix its body has; Codex's eventName is a source location and its
// attribute event.name the name).
const (
	ccPrefix          = "claude_code."
	ccUserPrompt      = "claude_code.user_prompt"
	ccAPIRequest      = "claude_code.api_request"
	ccAPIError        = "claude_code.api_error"
	ccRequestBody     = "claude_code.api_request_body"
	ccResponseBody    = "claude_code.api_response_body"
	ccToolDecision    = "claude_code.tool_decision"
	ccToolResult      = "claude_code.tool_result"
	ccAssistantAnswer = "claude_code.assistant_response"
	ccToolOutput      = "claude_code.tool_output" // a tool span's tool.output event, as a record (ClaudeToolOutput)

	codexPrefix       = "codex."
	codexUserPrompt   = "codex.user_prompt"
	codexAPIRequest   = "codex.api_request"
	codexSSEEvent     = "codex.sse_event"
	codexToolDecision = "codex.tool_decision"
	codexToolResult   = "codex.tool_result"
)

// agentRecords are the records mapped; an agent's other records
// (settings, plugins, startup phases, streamed deltas) are housekeeping.
var agentRecords = map[string]bool{
	ccUserPrompt: true, ccAPIRequest: true, ccAPIError: true, ccRequestBody: true, ccResponseBody: true,
	ccToolDecision: true, ccToolResult: true, ccAssistantAnswer: true, ccToolOutput: true,
	codexUserPrompt: true, codexAPIRequest: true, codexSSEEvent: true, codexToolDecision: true, codexToolResult: true,
}

// AgentEvent returns the normalized name of a Claude Code or Codex record
// and whether convtrace maps it (false for their housekeeping, and for
// every record of an agent a convtrace run records: schema.KeyRecordedBy);
// "" when it is no agent's record.
func AgentEvent(l LogRecord) (name string, mapped bool) {
	attr := l.Attrs.Str(schema.KeyEventName)
	switch {
	case strings.HasPrefix(l.Body, ccPrefix) && strings.TrimPrefix(l.Body, ccPrefix) == attr:
		name = l.Body
	case strings.HasPrefix(attr, codexPrefix) && l.Attrs.Str(codexConversation) != "":
		name = attr
	default:
		return "", false
	}
	if _, byRun := l.Resource.Get(schema.KeyRecordedBy); byRun {
		// A convtrace run records this agent's calls from its output.
		return name, false
	}
	if name == codexSSEEvent {
		// Of the streamed events, only the completed response's usage.
		_, usage := l.Attrs.Get(codexInputTokens)
		return name, usage
	}
	return name, agentRecords[name]
}

// Attributes of the agents' records.
const (
	ccSession         = "session.id"
	ccPromptID        = "prompt.id"
	ccSequence        = "event.sequence"
	ccRequestID       = "request_id"
	ccBodyID          = "request_body_id"
	codexConversation = "conversation.id"
	codexInputTokens  = "input_token_count"
)

// AgentKey returns the key under which an agent's record is joined: a
// trace id and a span id made from its session (and, for Claude Code, its
// prompt), the same on every instance. ok is false for a record that names
// neither.
func AgentKey(l LogRecord, name string) (traceID, spanID string, ok bool) {
	var session, unit string
	if strings.HasPrefix(name, ccPrefix) {
		// One prompt: its trace when Claude Code exports traces (its tool
		// spans, which carry the tool's output, have no prompt id), else
		// its prompt id.
		session, unit = l.Attrs.Str(ccSession), cmp.Or(l.TraceID, l.Attrs.Str(ccPromptID))
	} else {
		session = l.Attrs.Str(codexConversation)
		unit = session
	}
	if session == "" || unit == "" {
		return "", "", false
	}
	return hashID("agent-session", session, 16), hashID("agent-unit", unit, 8), true
}

// hashID is a trace (16 bytes) or span (8 bytes) id made from strings.
func hashID(kind, value string, n int) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + value))
	return hex.EncodeToString(sum[:n])
}

// Instrumentation scopes of the agents' own spans, which stay spans: the
// records say what they say.
const (
	keyScopeName   = "otel.scope.name"
	ccTracingScope = "com.anthropic.claude_code.tracing"
	codexScope     = "codex"
)

// agentSpan reports whether s is one of an agent's own spans.
func agentSpan(s Span) bool {
	scope := s.Attrs.Str(keyScopeName)
	return scope == ccTracingScope || scope == codexScope || strings.HasPrefix(scope, codexScope+"_")
}

// AgentStream reports whether s, built from log records, is an agent's
// records: each of its turns is keyed by its own record, so it is written
// as soon as anything arrives, and again as more does.
func AgentStream(s Span) bool {
	for _, e := range s.Events {
		if strings.HasPrefix(e.Name, ccPrefix) || strings.HasPrefix(e.Name, codexPrefix) {
			return true
		}
	}
	return false
}

// agentCall is one provider request an agent made, as its records tell.
type agentCall struct {
	id                string // what its turn ids are made from
	traceID, parentID string
	startNS, endNS    uint64
	model, provider   string
	input             []genai.Message // the request's messages, whole
	output            []genai.Message
	usage             []schema.Attr // GenAI usage keys, resolved like a span's
	failed            bool
	errMsg            string
	ttftMS            string
	requestID         string
	durationNS        uint64 // when longer than start to end: the answer streamed on after its turn began
}

// agentTool is one tool run an agent made.
type agentTool struct {
	id, name, callID  string
	requestID         string // of the call that asked for it
	traceID, parentID string
	startNS, endNS    uint64
	arguments, result string
	failed, hasResult bool
	attrs             []schema.Attr
}

// agentTurns maps the records of one Claude Code prompt or Codex
// conversation.
func agentTurns(s Span) []schema.Turn {
	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(seqOf(a), seqOf(b)), cmp.Compare(a.TimeNS, b.TimeNS))
	})
	var (
		calls   []agentCall
		tools   []agentTool
		session string
	)
	if strings.HasPrefix(events[0].Name, ccPrefix) {
		calls, tools = claudeCalls(events)
		session = events[0].Attrs.Str(ccSession)
	} else {
		calls, tools = codexCalls(events)
		session = events[0].Attrs.Str(codexConversation)
	}
	project := s.Resource.Str(projectResKeys...)
	var turns []schema.Turn
	for _, c := range calls {
		turns = append(turns, c.turns(s, project, session)...)
	}
	for _, t := range tools {
		turns = append(turns, t.turns(s, project, session)...)
	}
	return turns
}

// seqOf orders Claude Code's records of one process, whose times have
// milliseconds only; Codex's have nanoseconds and no sequence.
func seqOf(e Event) int64 {
	n, err := strconv.ParseInt(e.Attrs.Str(ccSequence), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// turns are a call's prompt and its response (or error) turn.
func (c agentCall) turns(s Span, project, session string) []schema.Turn {
	cs := Span{TraceID: cmp.Or(c.traceID, s.TraceID), SpanID: hashID("call", c.id, 8), ParentSpanID: c.parentID,
		StartNS: c.startNS, EndNS: c.endNS, Ended: c.endNS != 0, Failed: c.failed, StatusMsg: c.errMsg, Resource: s.Resource}
	cs.Attrs.List = append(cs.Attrs.List,
		schema.Attr{Key: schema.KeyOperationName, Value: schema.OperationChat},
		schema.Attr{Key: schema.KeyConversationID, Value: session},
		schema.Attr{Key: schema.KeySessionID, Value: session})
	if c.provider != "" {
		cs.Attrs.List = append(cs.Attrs.List, schema.Attr{Key: schema.KeyProviderName, Value: c.provider})
	}
	if c.model != "" {
		cs.Attrs.List = append(cs.Attrs.List, schema.Attr{Key: schema.KeyResponseModel, Value: c.model})
	}
	if c.requestID != "" {
		cs.Attrs.List = append(cs.Attrs.List, schema.Attr{Key: schema.KeyResponseID, Value: c.requestID},
			schema.Attr{Key: schema.KeyProviderRequestID, Value: c.requestID})
	}
	if c.ttftMS != "" {
		if ms, err := strconv.ParseFloat(c.ttftMS, 64); err == nil && ms >= 0 {
			cs.Attrs.List = append(cs.Attrs.List, schema.Attr{Key: schema.KeyTimeToFirstChunk, Value: strconv.FormatFloat(ms/1000, 'g', -1, 64)})
		}
	}
	cs.Attrs.List = append(cs.Attrs.List, c.usage...)
	turns := callTurns(cs, resolve(cs), exchange{input: c.input, output: c.output})
	for i := range turns {
		if project != "" {
			turns[i].Project = project
		}
		if turns[i].Seq == 1 && c.durationNS > turns[i].DurationNS {
			turns[i].DurationNS = c.durationNS
		}
	}
	return turns
}

// turns are a tool run's call and its result.
func (t agentTool) turns(s Span, project, session string) []schema.Turn {
	ts := Span{TraceID: cmp.Or(t.traceID, s.TraceID), SpanID: hashID("tool", t.id, 8), ParentSpanID: t.parentID,
		StartNS: t.startNS, EndNS: t.endNS, Ended: t.hasResult, Failed: t.failed, Resource: s.Resource}
	ts.Attrs.List = append(ts.Attrs.List,
		schema.Attr{Key: schema.KeyOperationName, Value: schema.OperationExecuteTool},
		schema.Attr{Key: schema.KeyToolName, Value: t.name}, schema.Attr{Key: schema.KeyToolCallID, Value: t.callID},
		schema.Attr{Key: schema.KeyConversationID, Value: session}, schema.Attr{Key: schema.KeySessionID, Value: session})
	ts.Attrs.List = append(ts.Attrs.List, t.attrs...)
	if t.failed {
		ts.StatusMsg = "tool failed"
	}
	turns := toolTurns(ts, resolve(ts), toolRun{name: t.name, callID: t.callID, arguments: t.arguments, result: t.result})
	for i := range turns {
		if project != "" {
			turns[i].Project = project
		}
	}
	return turns
}

// msOf reads a duration in milliseconds, which agents send as numbers or
// as strings.
func msOf(a Attrs, key string) uint64 {
	f, err := strconv.ParseFloat(a.Str(key), 64)
	if err != nil || f < 0 || f > 1e12 {
		return 0
	}
	return uint64(f * 1e6)
}

// startOf is when the call or tool whose record came at end started: its
// duration_ms earlier, but no earlier than the first time convtrace
// stores (schema.MinTimeNS), which a duration longer than the time since
// would pass.
func startOf(end uint64, a Attrs) uint64 {
	return end - min(end-min(end, schema.MinTimeNS), msOf(a, "duration_ms"))
}

// idsOf is where an agent's record sits in a trace, when the agent also
// exports traces: its own trace and span ids ("" when it has none).
func idsOf(e Event) (traceID, parentID string) {
	return e.Attrs.Str(keyRecordTraceID), e.Attrs.Str(keyRecordSpanID)
}

// Attributes under which a record's own trace and span ids travel when it
// is joined under an agent key (SpanFromLogs keeps them per event).
const (
	keyRecordTraceID = "convtrace.record.trace_id"
	keyRecordSpanID  = "convtrace.record.span_id"
)
