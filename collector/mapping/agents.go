package mapping

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// Claude Code (CLAUDE_CODE_ENABLE_TELEMETRY=1) and Codex ([otel] in its
// config.toml) export their own telemetry: log records, one per thing that
// happened (a prompt, a provider request, a tool decision, a tool result),
// not GenAI events. A session's records are joined like a GenAI call's
// (staging.go), under a key of their own: a Claude Code prompt (its
// prompt.id) or a Codex conversation, whose ids every record carries,
// whether or not the agent also exports traces. Each provider request
// becomes a call, each tool run a tool call and its result, in one thread
// per session id. Their spans stay in the spans table only: the records
// say everything the spans do and more, and the spans come only with a
// beta flag (Claude Code) or are hundreds of internal steps (Codex).

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
// and whether convtrace maps it (false for their housekeeping); "" when it
// is no agent's record.
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

// agentStream reports whether s is an agent's records joined.
func agentStream(s Span) bool {
	for _, e := range s.Events {
		if strings.HasPrefix(e.Name, ccPrefix) || strings.HasPrefix(e.Name, codexPrefix) {
			return true
		}
	}
	return false
}

// AgentStream reports whether s, built from log records, is an agent's
// records: each of its turns is keyed by its own record, so it is written
// as soon as anything arrives, and again as more does.
func AgentStream(s Span) bool { return s.SpanID != "" && agentStream(s) }

// agentCall is one provider request an agent made, as its records tell.
type agentCall struct {
	id                 string // what its turn ids are made from
	traceID, parentID  string
	startNS, endNS     uint64
	model, provider    string
	input              []genai.Message // the request's messages, whole
	output             []genai.Message
	usage              []schema.Attr // GenAI usage keys, resolved like a span's
	failed             bool
	errMsg             string
	ttftMS             string
	requestID, session string
	durationNS         uint64 // when longer than start to end: the answer streamed on after its turn began
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
		cs.Attrs.List = append(cs.Attrs.List, schema.Attr{Key: "gen_ai.response.id", Value: c.requestID})
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

// claudeCalls reads a Claude Code prompt's records: each api_request (or
// api_error) is a call; its request and answer come from the raw bodies
// when they were logged (OTEL_LOG_RAW_API_BODIES), else from the prompt,
// the tool runs and the answer text the other records give.
func claudeCalls(events []Event) ([]agentCall, []agentTool) {
	var (
		prompt     string
		bodies     = map[string]string{} // request_body_id → request body
		bodyOf     = map[string]string{} // request_id → request_body_id
		responses  = map[string]string{} // request_id → response body
		answers    = map[string]string{} // request_id → answer text
		tools      []agentTool
		toolAt     = map[string]int{}
		calls      []agentCall
		conv       []genai.Message // the prompt's conversation so far, without bodies
		promptTime uint64
	)
	for _, e := range events {
		a := e.Attrs
		switch e.Name {
		case ccUserPrompt:
			prompt, promptTime = a.Str("prompt", "prompt_text"), e.TimeNS
		case ccRequestBody:
			bodies[a.Str(ccBodyID)] = a.Str("body")
		case ccResponseBody:
			bodyOf[a.Str(ccRequestID)] = a.Str(ccBodyID)
			responses[a.Str(ccRequestID)] = a.Str("body")
		case ccAssistantAnswer:
			answers[a.Str(ccRequestID)] = a.Str("response")
		case ccToolDecision, ccToolResult, ccToolOutput:
			id := a.Str("tool_use_id")
			i, ok := toolAt[id]
			if !ok {
				i = len(tools)
				toolAt[id] = i
				tools = append(tools, agentTool{id: id, callID: id})
			}
			t := &tools[i]
			switch e.Name {
			case ccToolDecision:
				t.attrs = append(t.attrs, schema.Attr{Key: "claude_code.decision", Value: a.Str("decision")},
					schema.Attr{Key: "claude_code.decision.source", Value: a.Str("source")})
				t.name, t.requestID = cmp.Or(t.name, a.Str("tool_name")), cmp.Or(t.requestID, a.Str(ccRequestID))
				t.arguments = cmp.Or(t.arguments, a.Str("tool_parameters"))
			case ccToolOutput:
				t.result = a.Str("output")
			default:
				// The result's record alone keys the tool's turns.
				t.traceID, t.parentID = idsOf(e)
				t.name, t.requestID = a.Str("tool_name"), a.Str(ccRequestID)
				t.arguments = cmp.Or(a.Str("tool_input", "tool_parameters"), t.arguments)
				t.hasResult, t.endNS = true, e.TimeNS
				t.startNS = e.TimeNS - min(e.TimeNS, msOf(a, "duration_ms"))
				t.failed = a.Str("success") == "false"
			}
		case ccAPIRequest, ccAPIError:
			trace, parent := idsOf(e)
			c := agentCall{id: a.Str(ccRequestID), traceID: trace, parentID: parent, endNS: e.TimeNS,
				model: a.Str("model"), provider: "anthropic", requestID: a.Str(ccRequestID), ttftMS: a.Str("ttft_ms")}
			if c.id == "" {
				c.id = a.Str(ccPromptID) + "/" + strconv.Itoa(len(calls))
			}
			c.startNS = e.TimeNS - min(e.TimeNS, msOf(a, "duration_ms"))
			if e.Name == ccAPIError {
				c.failed, c.errMsg = true, a.Str("error", "status_code")
			}
			c.usage = claudeUsage(a)
			calls = append(calls, c)
		}
	}
	// A tool's turns come with its result and the call that asked for it,
	// after which they sort (Claude Code may log the call's end after the
	// tool began): both records key them.
	ended := map[string]uint64{}
	for _, c := range calls {
		ended[c.requestID] = c.endNS
	}
	tools = slices.DeleteFunc(tools, func(t agentTool) bool {
		_, asked := ended[t.requestID]
		return !t.hasResult || !asked
	})
	for i := range tools {
		t := &tools[i]
		t.startNS = max(t.startNS, ended[t.requestID]+1)
		t.endNS = max(t.endNS, t.startNS)
	}
	toolAt = map[string]int{}
	asked := map[string][]genai.Part{}
	for i, t := range tools {
		toolAt[t.callID] = i
		asked[t.requestID] = append(asked[t.requestID], genai.ToolCall(t.callID, t.name, t.arguments))
	}
	// The conversation the prompt's calls built, call by call.
	if prompt != "" && promptTime != 0 {
		conv = append(conv, genai.Message{Role: "user", Parts: []genai.Part{genai.Text(prompt)}})
	}
	for i := range calls {
		c := &calls[i]
		if ms, ok := anthropicRequest(bodies[bodyOf[c.requestID]]); ok {
			c.input = ms
		} else {
			c.input = slices.Clone(conv)
		}
		if ms, ok := anthropicResponse(responses[c.requestID]); ok {
			c.output = ms
		} else {
			var parts []genai.Part
			if text := answers[c.requestID]; text != "" {
				parts = append(parts, genai.Text(text))
			}
			parts = append(parts, asked[c.requestID]...)
			if len(parts) > 0 {
				c.output = []genai.Message{{Role: "assistant", Parts: parts}}
			}
		}
		conv = append(conv, c.output...)
		for _, p := range asked[c.requestID] {
			t := tools[toolAt[p.ID]]
			conv = append(conv, genai.Message{Role: "tool", Parts: []genai.Part{genai.ToolResponse(t.callID, t.result)}})
		}
	}
	return calls, tools
}

// claudeUsage is an api_request's usage: Claude Code counts input without
// the cache, as Anthropic's API does.
func claudeUsage(a Attrs) []schema.Attr {
	in, _ := a.uint32("input_tokens")
	read, _ := a.uint32("cache_read_tokens")
	write, _ := a.uint32("cache_creation_tokens")
	var out []schema.Attr
	if in != nil {
		total := schema.InputTokens(uint64(*in), count(read), count(write), true)
		out = append(out, schema.Attr{Key: schema.KeyInputTokens, Value: strconv.FormatUint(total, 10)})
	}
	for _, k := range []struct{ from, to string }{
		{"output_tokens", schema.KeyOutputTokens}, {"cache_read_tokens", schema.KeyCacheReadTokens},
		{"cache_creation_tokens", schema.KeyCacheWriteTokens}, {"cost_usd", schema.KeyCostUSD},
	} {
		if v, ok := a.Get(k.from); ok {
			out = append(out, schema.Attr{Key: k.to, Value: v})
		}
	}
	return out
}

// anthropicRequest reads a logged Messages API request body: its system
// prompt and messages.
func anthropicRequest(body string) ([]genai.Message, bool) {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
	}
	if body == "" || json.Unmarshal([]byte(body), &req) != nil {
		return nil, false
	}
	ms, ok := genai.Parse(string(req.Messages))
	if !ok {
		return nil, false
	}
	if len(req.System) > 0 && string(req.System) != "null" {
		system := genai.PartsFromJSON(req.System)
		if len(system) > 0 {
			ms = append([]genai.Message{{Role: "system", Parts: system}}, ms...)
		}
	}
	return ms, true
}

// anthropicResponse reads a logged Messages API response body.
func anthropicResponse(body string) ([]genai.Message, bool) {
	var resp struct {
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	}
	if body == "" || json.Unmarshal([]byte(body), &resp) != nil || len(resp.Content) == 0 {
		return nil, false
	}
	m := genai.Message{Role: "assistant", Parts: genai.PartsFromJSON(resp.Content), FinishReason: resp.StopReason}
	return []genai.Message{m}, true
}

// codexCalls reads a Codex conversation's records: each api_request is a
// call, keyed by that record (its answer's turn at the time the answer
// began, when the response headers came); its usage is the completed
// response's that follows it, and the tool runs after that are what it
// asked for. Codex sends no answer text.
func codexCalls(events []Event) ([]agentCall, []agentTool) {
	var (
		calls []agentCall
		tools []agentTool
		conv  []genai.Message
		done  []uint64 // when each call's response completed
		// decisions are the tool decisions by call id.
		decisions = map[string][]schema.Attr{}
	)
	last := func() *agentCall {
		if len(calls) == 0 {
			return nil
		}
		return &calls[len(calls)-1]
	}
	for _, e := range events {
		a := e.Attrs
		switch e.Name {
		case codexUserPrompt:
			conv = append(conv, genai.Message{Role: "user", Parts: []genai.Part{genai.Text(a.Str("prompt"))}})
		case codexAPIRequest:
			trace, parent := idsOf(e)
			c := agentCall{id: a.Str(codexConversation) + "/" + strconv.FormatUint(e.TimeNS, 10),
				traceID: trace, parentID: parent, startNS: e.TimeNS - min(e.TimeNS, msOf(a, "duration_ms")), endNS: e.TimeNS,
				model: a.Str("model"), provider: "openai", input: slices.Clone(conv)}
			if code := a.Str("http.response.status_code"); code != "" && code[0] != '2' {
				c.failed, c.errMsg = true, "HTTP "+code
			}
			calls = append(calls, c)
			done = append(done, 0)
		case codexSSEEvent:
			if c := last(); c != nil && done[len(done)-1] == 0 {
				done[len(done)-1] = e.TimeNS
				c.usage = codexUsage(a)
				c.ttftMS = a.Str("ttft_ms")
			}
		case codexToolResult:
			id := a.Str("call_id")
			trace, parent := idsOf(e)
			t := agentTool{id: a.Str(codexConversation) + "/" + id, callID: id, name: a.Str("tool_name"),
				traceID: trace, parentID: parent, startNS: e.TimeNS - min(e.TimeNS, msOf(a, "duration_ms")), endNS: e.TimeNS,
				arguments: a.Str("arguments"), result: a.Str("output"), failed: a.Str("success") == "false", hasResult: true}
			tools = append(tools, t)
			if c := last(); c != nil {
				if len(c.output) == 0 {
					c.output = []genai.Message{{Role: "assistant"}}
				}
				c.output[0].Parts = append(c.output[0].Parts, genai.ToolCall(id, t.name, t.arguments))
			}
			conv = append(conv, genai.Message{Role: "assistant", Parts: []genai.Part{genai.ToolCall(id, t.name, t.arguments)}},
				genai.Message{Role: "tool", Parts: []genai.Part{genai.ToolResponse(id, t.result)}})
		case codexToolDecision:
			decisions[a.Str("call_id")] = []schema.Attr{{Key: "codex.decision", Value: a.Str("decision")},
				{Key: "codex.decision.source", Value: a.Str("source")}}
		}
	}
	// A decision rides on its tool's result, which names the same call.
	for i := range tools {
		tools[i].attrs = decisions[tools[i].callID]
	}
	for i := range calls {
		if done[i] > calls[i].startNS {
			calls[i].durationNS = done[i] - calls[i].startNS
		}
	}
	return calls, tools
}

// codexUsage is a completed response's usage: Codex counts input with the
// cache, as OpenAI's API does.
func codexUsage(a Attrs) []schema.Attr {
	var out []schema.Attr
	for _, k := range []struct{ from, to string }{
		{codexInputTokens, schema.KeyInputTokens}, {"output_token_count", schema.KeyOutputTokens},
		{"cached_token_count", schema.KeyCacheReadTokens}, {"cache_write_token_count", schema.KeyCacheWriteTokens},
		{"reasoning_token_count", schema.KeyReasoningTokens},
	} {
		if v, ok := a.Get(k.from); ok {
			out = append(out, schema.Attr{Key: k.to, Value: v})
		}
	}
	return out
}

// ClaudeToolOutput returns, for a Claude Code tool span, the record that
// carries its tool.output event (the one place Claude Code sends a tool's
// output) as a record of its prompt, so that it joins the tool's result.
func ClaudeToolOutput(s Span) (attrs []schema.Attr, timeNS uint64, ok bool) {
	if s.Attrs.Str(keyScopeName) != ccTracingScope {
		return nil, 0, false
	}
	for _, e := range s.Events {
		if e.Name != "tool.output" {
			continue
		}
		return []schema.Attr{
			{Key: schema.KeyEventName, Value: strings.TrimPrefix(ccToolOutput, ccPrefix)},
			{Key: ccSession, Value: s.Attrs.Str(ccSession)},
			{Key: "tool_use_id", Value: s.Attrs.Str("tool_use_id", schema.KeyToolCallID)},
			{Key: "output", Value: e.Attrs.Str("output")},
		}, e.TimeNS, true
	}
	return nil, 0, false
}

// ClaudeToolOutputBody is the body of the record ClaudeToolOutput makes.
const ClaudeToolOutputBody = ccToolOutput
