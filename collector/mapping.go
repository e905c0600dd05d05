package collector

import (
	"strconv"

	"github.com/convtrace/convtrace/schema"
)

// call is what the attribute contract (ARCHITECTURE.md) resolves from a span:
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
}

// contractKeys are the attributes resolve consumes; the rest of a span's
// attributes are kept on its turns' attributes column.
var contractKeys = map[string]bool{}

func keys(ks ...string) []string {
	for _, k := range ks {
		contractKeys[k] = true
	}
	return ks
}

var (
	threadKeys     = keys(schema.KeyConversationID, schema.KeyThreadID, "session.id", "traceloop.association.properties.thread_id")
	phaseKeys      = keys(schema.KeyPhase)
	roundKeys      = keys(schema.KeyRound)
	speakerKeys    = keys(schema.KeySpeaker, schema.KeyAgentName)
	agentKeys      = keys(schema.KeyAgent)
	parentKeys     = keys(schema.KeyParentTurnID)
	sessionKeys    = keys(schema.KeySessionID)
	operationKeys  = keys(schema.KeyOperationName)
	providerKeys   = keys(schema.KeyProviderName, schema.KeySystem, "llm.system")
	modelKeys      = keys(schema.KeyResponseModel, schema.KeyRequestModel, "llm.model_name")
	inputKeys      = keys(schema.KeyInputTokens)
	outputKeys     = keys(schema.KeyOutputTokens)
	cacheReadKeys  = keys(schema.KeyCacheReadTokens)
	cacheWriteKeys = keys(schema.KeyCacheWriteTokens)
	reasoningKeys  = keys(schema.KeyReasoningTokens)
	costKeys       = keys(schema.KeyCostUSD)
	toolNameKeys   = keys(schema.KeyToolName)
	toolCallIDKeys = keys(schema.KeyToolCallID)
	projectResKeys = []string{schema.KeyProject, schema.KeyServiceName}
	_              = keys(schema.KeyRequestModel, schema.KeyErrorType)
)

func resolve(s span) call {
	a := s.attrs
	c := call{
		project:          s.resource.str(projectResKeys...),
		thread:           a.str(threadKeys...),
		session:          a.str(sessionKeys...),
		phase:            a.str(phaseKeys...),
		speaker:          a.str(speakerKeys...),
		agent:            a.str(agentKeys...),
		parentTurnID:     a.str(parentKeys...),
		operation:        a.str(operationKeys...),
		provider:         a.str(providerKeys...),
		model:            a.str(modelKeys...),
		tokensIn:         a.uint32(inputKeys...),
		tokensOut:        a.uint32(outputKeys...),
		tokensCacheRead:  a.uint32(cacheReadKeys...),
		tokensCacheWrite: a.uint32(cacheWriteKeys...),
		tokensReasoning:  a.uint32(reasoningKeys...),
		costUSD:          a.float64(costKeys...),
		toolName:         a.str(toolNameKeys...),
		toolCallID:       a.str(toolCallIDKeys...),
	}
	if c.project == "" {
		c.project = s.attrs.str(schema.KeyProject)
	}
	if c.thread == "" {
		c.thread = s.traceID // a trace with no thread is its own thread
	}
	if v, ok := a.get(roundKeys...); ok {
		if r, err := strconv.ParseUint(v, 10, 16); err == nil {
			c.round = uint16(r)
		}
	}
	return c
}

// mapTurns returns the conversation turns of a span: none for a span that is
// neither a provider call nor a tool execution. A span still running yields
// only its prompt.
func mapTurns(s span) []schema.Turn {
	return mapConvtrace(s, resolve(s))
}

// mapSpan returns the spans-table row of any span.
func mapSpan(s span) schema.Span {
	c := resolve(s)
	row := schema.Span{
		TraceID: s.traceID, SpanID: s.spanID, ParentSpanID: s.parentSpanID,
		Project: c.project, ThreadID: c.thread, Phase: c.phase, Round: c.round,
		Speaker: c.speaker, Agent: c.agent, Name: s.name, Kind: s.kind,
		StartNS: s.startNS, DurationNS: s.durationNS(), Status: s.status(), StatusMsg: s.statusMsg,
		Operation: c.operation, Provider: c.provider, Model: c.model,
		TokensIn: c.tokensIn, TokensOut: c.tokensOut, CostUSD: c.costUSD,
		Attributes: s.attrs.list, Resource: s.resource.list,
	}
	for _, e := range s.events {
		row.EventNames = append(row.EventNames, e.name)
		row.EventTimesNS = append(row.EventTimesNS, e.timeNS)
	}
	return row
}

// base returns a turn carrying the call's identity, shared by all its rows.
func (c call) base(s span) schema.Turn {
	return schema.Turn{
		TraceID: s.traceID, SpanID: s.spanID, ParentSpanID: s.parentSpanID,
		ParentTurnID: c.parentTurnID, Project: c.project, ThreadID: c.thread,
		SessionID: c.session, Phase: c.phase, Speaker: c.speaker, Agent: c.agent,
		Round: c.round, Operation: c.operation, Provider: c.provider, Model: c.model,
		ToolName: c.toolName, ToolCallID: c.toolCallID, Status: schema.StatusOK,
	}
}

// extraAttrs returns the span's attributes the contract did not consume.
func (s span) extraAttrs() []schema.Attr {
	var extra []schema.Attr
	for _, a := range s.attrs.list {
		if !contractKeys[a.Key] {
			extra = append(extra, a)
		}
	}
	return extra
}

func (s span) durationNS() uint64 {
	if !s.ended || s.endNS < s.startNS {
		return 0
	}
	return s.endNS - s.startNS
}

func (s span) status() string {
	if s.failed {
		return schema.StatusError
	}
	return schema.StatusOK
}

// errorMessage is the failure of a failed span: its status message, else
// the message of its exception event.
func (s span) errorMessage() string {
	if s.statusMsg != "" {
		return s.statusMsg
	}
	for _, e := range s.events {
		if e.name == "exception" {
			return e.attrs.str("exception.message")
		}
	}
	return "call failed"
}
