package mapping

import (
	"math"
	"strconv"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// call is what the attribute contract (README.md, "Attribute contract") resolves from a span:
// for each meaning, the first attribute found wins.
type call struct {
	project, thread, session          string
	phase, speaker, agent             string
	round                             uint16
	parentTurnID                      string
	operation, provider, model        string
	tokensIn, tokensOut               *uint32
	tokensCacheRead, tokensCacheWrite *uint32
	tokensReasoning                   *uint32
	costUSD                           *float64
	toolName, toolCallID              string
	internal                          bool
	ttftNS                            uint64 // time to first token, 0 when unknown
	sanitised                         int    // usage values present but invalid, resolved as unknown
}

// contractKeys are the attributes resolve and the conventions consume; the
// rest of a span's attributes are kept on its turns' attributes column.
// contractPrefixes are the indexed families consumed, such as
// gen_ai.prompt.0.content: a key matches when a digit follows the prefix.
var (
	contractKeys     = map[string]bool{}
	contractPrefixes []string
)

func keys(ks ...string) []string {
	for _, k := range ks {
		contractKeys[k] = true
	}
	return ks
}

func prefixes(ps ...string) []string {
	contractPrefixes = append(contractPrefixes, ps...)
	return ps
}

// consumed reports whether mapping reads key, so turns need not repeat it.
func consumed(key string) bool {
	if contractKeys[key] {
		return true
	}
	for _, p := range contractPrefixes {
		if isIndexed(key, p) {
			return true
		}
	}
	return false
}

// The attribute contract (README.md, "Attribute contract"), with the names of
// OpenLLMetry and OpenInference. For each meaning the first key present
// wins, so the OTel GenAI names come first.
var (
	threadKeys = keys(schema.KeyConversationID, schema.KeyThreadID, "session.id",
		"traceloop.association.properties.thread_id", "traceloop.association.properties.session_id",
		"traceloop.association.properties.conversation_id",
		vcMetadata+"threadId", vcMetadata+"thread_id", vcMetadata+"thread", vcMetadata+"sessionId", mastraSessionID)
	phaseKeys      = keys(schema.KeyPhase, vcMetadata+"phase")
	roundKeys      = keys(schema.KeyRound, vcMetadata+"round")
	speakerKeys    = keys(schema.KeySpeaker, schema.KeyAgentName, vcMetadata+"speaker", vcFunctionID)
	agentKeys      = keys(schema.KeyAgent, vcMetadata+"agent")
	parentKeys     = keys(schema.KeyParentTurnID)
	sessionKeys    = keys(schema.KeySessionID, vcMetadata+"sessionId")
	operationKeys  = keys(schema.KeyOperationName)
	providerKeys   = keys(schema.KeyProviderName, schema.KeySystem, oiSystem, oiProvider, vcModelProvider)
	modelKeys      = keys(schema.KeyResponseModel, schema.KeyRequestModel, oiResponseModel, oiModel, oiRequestModel, vcResponseModel, vcModelID)
	inputKeys      = keys(schema.KeyInputTokens, olPromptTokens, oiPromptTokens, vcInputTokens, vcPromptTokens)
	outputKeys     = keys(schema.KeyOutputTokens, olCompletionTokens, oiCompletionTokens, vcOutputTokens, vcCompletionToks)
	totalKeys      = keys(olTotalTokens, oiTotalTokens)
	cacheReadKeys  = keys(schema.KeyCacheReadTokens, olCacheReadTokens, oiCacheReadTokens, vcCachedTokens)
	cacheWriteKeys = keys(schema.KeyCacheWriteTokens, schema.KeyCacheCreationTokens, olCacheCreationTokens, oiCacheWriteTokens)
	reasoningKeys  = keys(schema.KeyReasoningTokens, oiReasoningTokens, vcReasoningTokens)
	costKeys       = keys(schema.KeyCostUSD, oiCostTotal)
	toolNameKeys   = keys(schema.KeyToolName, oiToolName)
	toolCallIDKeys = keys(schema.KeyToolCallID, oiToolCallID, oiToolID)
	projectResKeys = []string{schema.KeyProject, schema.KeyServiceName}
	_              = keys(schema.KeyRequestModel, schema.KeyErrorType, schema.KeyInternal)
)

func resolve(s Span) call {
	a := s.Attrs
	if extra := mastraAttrs(a); extra != nil {
		a.List = append(extra, a.List...)
	}
	sanitised := 0
	count := func(keys []string) *uint32 {
		n, invalid := a.uint32(keys...)
		if invalid {
			sanitised++
		}
		return n
	}
	c := call{
		project:          s.Resource.Str(projectResKeys...),
		thread:           a.Str(threadKeys...),
		session:          a.Str(sessionKeys...),
		phase:            a.Str(phaseKeys...),
		speaker:          a.Str(speakerKeys...),
		agent:            a.Str(agentKeys...),
		parentTurnID:     a.Str(parentKeys...),
		operation:        a.Str(operationKeys...),
		provider:         a.Str(providerKeys...),
		model:            a.Str(modelKeys...),
		tokensIn:         count(inputKeys),
		tokensOut:        count(outputKeys),
		tokensCacheRead:  count(cacheReadKeys),
		tokensCacheWrite: count(cacheWriteKeys),
		tokensReasoning:  count(reasoningKeys),
		toolName:         a.Str(toolNameKeys...),
		toolCallID:       a.Str(toolCallIDKeys...),
		internal:         a.bool(schema.KeyInternal),
		ttftNS:           timeToFirstToken(s),
	}
	cost, invalid := a.cost(costKeys...)
	if invalid {
		sanitised++
	}
	c.costUSD = cost
	if c.project == "" {
		c.project = s.Attrs.Str(schema.KeyProject)
	}
	if c.operation == "" {
		c.operation = openInferenceOperation(a)
	}
	if c.operation == "" {
		c.operation = openLLMetryOperation(a)
	}
	if c.operation == "" && vercelProviderCall(vercelOperation(a)) {
		c.operation = schema.OperationChat
	}
	c.provider = vercelProvider(a, c.provider)
	if c.provider == "" {
		c.provider = metadataProvider(a)
	}
	c.provider = providerName(c.provider)
	// A total with one side known gives the other.
	if total := count(totalKeys); total != nil {
		switch {
		case c.tokensIn == nil && c.tokensOut != nil && *total >= *c.tokensOut:
			c.tokensIn = u32p(*total - *c.tokensOut)
		case c.tokensOut == nil && c.tokensIn != nil && *total >= *c.tokensIn:
			c.tokensOut = u32p(*total - *c.tokensIn)
		}
	}
	c.tokensIn = inputTokens(c.tokensIn, c.tokensCacheRead, c.tokensCacheWrite)
	if c.thread == "" {
		c.thread = s.TraceID // a trace with no thread is its own thread
	}
	if v, ok := a.Get(roundKeys...); ok {
		if r, err := strconv.ParseUint(v, 10, 16); err == nil {
			c.round = uint16(r)
		}
	}
	c.sanitised = sanitised
	return c
}

// Turns returns the conversation turns of a span: none for a span that is
// neither a provider call nor a tool execution, only its prompt for a span
// still running. The first convention that recognises the span maps it
// (the order: docs/design/mapping.md).
func Turns(s Span) []schema.Turn { return turns(s, resolve(s)) }

// Rows returns the turns and the spans row of a span, as Turns and SpanRow
// do, resolving its attributes once for both.
func Rows(s Span) ([]schema.Turn, schema.Span, int) {
	c := resolve(s)
	return turns(s, c), spanRow(s, c), c.sanitised
}

func turns(s Span, c call) []schema.Turn {
	if s.duplicate || vercelWrapper(s) || agentSpan(s) {
		return nil
	}
	if AgentStream(s) {
		return agentTurns(s)
	}
	if reset, ok := contextReset(s, c); ok {
		return reset
	}
	if prompt, ok := s.convtracePrompt(); ok {
		return mapConvtrace(s, c, prompt)
	}
	for _, tool := range toolConventions {
		if run, ok := tool(s); ok {
			return toolTurns(s, c, run)
		}
	}
	for _, conv := range callConventions {
		if x, ok := conv(s); ok {
			return callTurns(s, c, s.inherited.fill(x))
		}
	}
	return nil
}

// callConventions recognise a provider call and read what it said, in the
// order they are tried.
var callConventions = []func(Span) (exchange, bool){
	mastraCall,
	vercelCall,
	genAIContent,
	openLLMetryCall,
	openInferenceCall,
	genAICall,
}

// toolConventions recognise a tool execution, in the order they are tried.
var toolConventions = []func(Span) (toolRun, bool){
	genAITool,
	vercelTool,
	openInferenceTool,
	openLLMetryTool,
	mastraToolRun,
}

// exchange is what a provider call said, whichever convention recorded it:
// the input messages (system instructions first) and the output messages,
// or, when a convention gives no messages, its plain input and output
// values.
type exchange struct {
	input, output         []genai.Message
	inputText, outputText string
}

// prompt is the content of the call's prompt turn: the normalized input
// messages JSON.
func (x exchange) prompt() string {
	if len(x.input) > 0 {
		return genai.Render(x.input)
	}
	return x.inputText
}

// response is the content of the call's response turn: the answer's text
// when it is plain text, else the normalized output messages JSON.
func (x exchange) response() string {
	if len(x.output) == 0 {
		return x.outputText
	}
	if text, ok := genai.PlainText(x.output); ok {
		return text
	}
	return genai.Render(x.output)
}

// callTurns returns the prompt turn and the response (or error) turn of a
// provider call.
func callTurns(s Span, c call, x exchange) []schema.Turn {
	ask := c.base(s)
	ask.Role, ask.Seq = schema.RolePrompt, 0
	ask.TurnID = schema.TurnID(s.SpanID, ask.Role, 0)
	ask.StartNS = s.StartNS
	setText(&ask, x.prompt())
	if !s.Ended {
		return []schema.Turn{ask}
	}
	answer := c.finish(s, schema.RoleResponse, 1, func(t schema.Turn) schema.Turn {
		setText(&t, x.response())
		if calls := genai.ToolCalls(x.output); len(calls) == 1 {
			t.ToolName, t.ToolCallID = calls[0].Name, calls[0].ID
		}
		return t
	})
	return []schema.Turn{ask, answer}
}

// finish returns the turn (seq 1) that ends a call: role with the content
// set by content and the call's usage, or, when the call failed, an error
// turn carrying the failure.
func (c call) finish(s Span, role string, seq uint16, content func(schema.Turn) schema.Turn) schema.Turn {
	t := c.base(s)
	t.Seq = seq
	t.StartNS = s.EndNS
	t.DurationNS = s.durationNS()
	t.Attributes = s.extraAttrs()
	if s.Failed {
		t.Role = schema.RoleError
		t.Status = schema.StatusError
		t.Error = s.errorMessage()
		if role == schema.RoleToolResult {
			// A failed tool's output is its answer; the error message
			// stands in when there is none.
			t.Role = schema.RoleToolResultError
			t = content(t)
		}
		if t.Content == "" {
			setText(&t, t.Error)
		}
	} else {
		t.Role = role
		t = content(t)
	}
	if role == schema.RoleResponse {
		// The turn that ends a provider call, failed or not, carries what
		// the call reported, and is the one row that counts it as a call.
		t.TokensIn, t.TokensOut = c.tokensIn, c.tokensOut
		t.TokensCacheRead, t.TokensCacheWrite = c.tokensCacheRead, c.tokensCacheWrite
		t.TokensReasoning, t.CostUSD = c.tokensReasoning, c.costUSD
		t.TTFTNS = c.ttftNS
		if t.TokensIn == nil && t.TokensOut == nil && t.CostUSD == nil {
			t.CostSource = schema.CostNone
		}
	}
	t.TurnID = schema.TurnID(s.SpanID, t.Role, seq)
	return t
}

func setText(t *schema.Turn, content string) {
	t.Content = content
	t.ContentBytes = uint32(len(content))
}

// SpanRow returns the spans-table row of any span, and how many of its
// usage values were invalid and so are unknown in the row and its turns.
// The row keeps every attribute but the content its turns hold
// (content_once.go).
func SpanRow(s Span) (schema.Span, int) {
	c := resolve(s)
	return spanRow(s, c), c.sanitised
}

func spanRow(s Span, c call) schema.Span {
	row := schema.Span{
		TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
		Project: c.project, ThreadID: c.thread, Phase: c.phase, Round: c.round,
		Speaker: c.speaker, Agent: c.agent, Name: s.Name, Kind: s.Kind,
		StartNS: s.StartNS, DurationNS: s.durationNS(), Status: s.status(), StatusMsg: s.StatusMsg,
		Operation: c.operation, Provider: c.provider, Model: c.model,
		TokensIn: c.tokensIn, TokensOut: c.tokensOut, CostUSD: c.costUSD,
		Attributes: rowAttributes(s), Resource: s.Resource.List,
	}
	for _, e := range s.Events {
		row.EventNames = append(row.EventNames, e.Name)
		row.EventTimesNS = append(row.EventTimesNS, e.TimeNS)
	}
	return row
}

// base returns a turn carrying the call's identity, shared by all its rows,
// and the span's thread attributes, shown while its first call runs.
func (c call) base(s Span) schema.Turn {
	return schema.Turn{
		TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
		ParentTurnID: c.parentTurnID, Project: c.project, ThreadID: c.thread,
		SessionID: c.session, Phase: c.phase, Speaker: c.speaker, Agent: c.agent,
		Round: c.round, Operation: c.operation, Provider: c.provider, Model: c.model,
		ToolName: c.toolName, ToolCallID: c.toolCallID, Status: schema.StatusOK, Internal: c.internal,
		Attributes: s.threadAttrs(),
	}
}

// extraAttrs returns the span's attributes the contract did not consume.
func (s Span) extraAttrs() []schema.Attr {
	var extra []schema.Attr
	for _, a := range s.Attrs.List {
		if !consumed(a.Key) {
			extra = append(extra, a)
		}
	}
	return extra
}

func u32p(n uint32) *uint32 { return &n }

// count is a token count, 0 when unknown.
func count(n *uint32) uint64 {
	if n == nil {
		return 0
	}
	return uint64(*n)
}

// inputTokens applies schema.InputTokens to a source that does not say
// whether its input count includes the cache; nil stays unknown.
func inputTokens(in, cacheRead, cacheWrite *uint32) *uint32 {
	if in == nil {
		return nil
	}
	n := schema.InputTokens(uint64(*in), count(cacheRead), count(cacheWrite), false)
	return u32p(uint32(min(n, math.MaxUint32)))
}
