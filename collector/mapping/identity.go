package mapping

import (
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// The pure part of the OTLP path's decision of which signals are one
// provider call (docs/design/staging.md).

// Attributes that mark an in-progress copy of a span: Pydantic Logfire
// sends one when a span starts (span type pending_span, its real span as
// parent), and the real span when it ends.
const (
	keyLogfireSpanType      = "logfire.span_type"
	keyLogfirePendingParent = "logfire.pending_parent_id"
	logfirePendingSpan      = "pending_span"
)

// Pending reports whether s is an in-progress copy of another span: never
// a call, and not stored, as the span it copies comes whole when it ends.
func Pending(s Span) bool {
	if s.Attrs.Str(keyLogfireSpanType) == logfirePendingSpan {
		return true
	}
	_, ok := s.Attrs.Get(keyLogfirePendingParent)
	return ok
}

// IsCall reports whether s maps to a provider call's turns (not a tool
// execution, an agent, a framework's own step or a wrapper).
func IsCall(s Span) bool {
	if s.duplicate || vercelWrapper(s) || agentSpan(s) {
		return false
	}
	if _, ok := s.convtracePrompt(); ok {
		return false
	}
	for _, tool := range toolConventions {
		if _, ok := tool(s); ok {
			return false
		}
	}
	_, ok := callExchange(s)
	return ok
}

// IsTool reports whether s maps to a tool execution's turns.
func IsTool(s Span) bool {
	if s.duplicate || agentSpan(s) {
		return false
	}
	for _, tool := range toolConventions {
		if _, ok := tool(s); ok {
			return true
		}
	}
	return false
}

// Staged reports whether the OTLP path joins s durably before writing its
// turns: a provider call (nested spans of one call, what it inherits, log
// records with its content) or a tool execution (what it inherits, and
// where it sorts).
func Staged(s Span) bool { return NeedsLogs(s) || IsCall(s) || IsTool(s) }

// Complete reports whether the turns of a staged span are final but for
// usage: a call's (CallComplete), or an ended tool's.
func Complete(s Span) bool {
	if IsTool(s) {
		return s.Ended
	}
	return CallComplete(s)
}

// Project is the project s is stored under (the resource's
// convtrace.project or service.name).
func Project(s Span) string { return resolve(s).project }

// HasThread reports whether s names its thread itself.
func HasThread(s Span) bool {
	_, ok := s.Attrs.Get(threadKeys...)
	return ok
}

// callExchange reads s with the first call convention that recognises it.
func callExchange(s Span) (exchange, bool) {
	for _, conv := range callConventions {
		if x, ok := conv(s); ok {
			return x, true
		}
	}
	return exchange{}, false
}

// CallComplete reports whether a call span has ended and says what was
// asked and what was answered (or that the call failed), counting what it
// inherits: nothing a later record could add changes its turns but usage.
func CallComplete(s Span) bool {
	if !s.Ended {
		return false
	}
	x, ok := callExchange(s)
	if !ok {
		return false
	}
	x = s.inherited.fill(x)
	asked := len(x.input) > 0 || x.inputText != ""
	answered := len(x.output) > 0 || x.outputText != ""
	return asked && (answered || s.Failed)
}

// Fold returns the one call that two nested spans of one provider call
// make: rep's identity (ids, times, name, status), the content of whichever
// span has it (rep's first), the attributes of both (rep's first, so that
// its thread and model win), and the usage of whichever tells more.
func Fold(rep, other Span) Span {
	m := rep
	seen := make(map[string]bool, len(rep.Attrs.List))
	for _, kv := range rep.Attrs.List {
		seen[kv.Key] = true
	}
	m.Attrs.List = append([]schema.Attr(nil), rep.Attrs.List...)
	for _, kv := range other.Attrs.List {
		if !seen[kv.Key] {
			m.Attrs.List = append(m.Attrs.List, kv)
		}
	}
	if !hasContent(rep) && hasContent(other) {
		m.Events = append(append([]Event(nil), rep.Events...), other.Events...)
	}
	if usageScore(other) > usageScore(rep) {
		m.Attrs = withUsageOf(m.Attrs, resolve(other))
	}
	m.inherited = rep.inherited
	return m
}

// inherited is what a call takes from its ancestors when its own span
// does not say it: the system instructions and the input.
type inherited struct {
	system []genai.Part
	input  []genai.Message
}

// fill gives x the inherited system instructions when it has none, and the
// inherited input when it has no input at all.
func (in inherited) fill(x exchange) exchange {
	if len(x.input) == 0 && x.inputText == "" && len(in.input) > 0 {
		x.input = append([]genai.Message(nil), in.input...)
	}
	if len(in.system) > 0 && x.inputText == "" && !hasSystem(x.input) {
		x.input = append([]genai.Message{{Role: "system", Parts: in.system}}, x.input...)
	}
	return x
}

func hasSystem(ms []genai.Message) bool {
	return len(ms) > 0 && ms[0].Role == "system"
}

// Keys under which frameworks name the agent on its own span, not on the
// calls it makes: OpenInference AGENT spans (graph.node.id, agent.name),
// the OTel GenAI invoke_agent span (gen_ai.agent.name).
const (
	oiGraphNodeID = "graph.node.id"
	oiAgentName   = "agent.name"
	oiMetadata    = "metadata"
)

// Inherit returns s with what it lacks taken from its ancestors, nearest
// first: its thread, the agent that made the call (or ran the tool), its
// provider, its system instructions and its input. What s says itself
// always wins.
func Inherit(s Span, ancestors []Span) Span {
	if len(ancestors) == 0 {
		return s
	}
	x, _ := callExchange(s)
	c := resolve(s)
	tool := IsTool(s)
	needSpeaker := c.speaker == "" && c.agent == ""
	needThread := !HasThread(s)
	needProvider := c.provider == "" && !tool
	needSystem := x.inputText == "" && !hasSystem(x.input)
	needInput := len(x.input) == 0 && x.inputText == ""
	out := s
	out.Attrs.List = append([]schema.Attr(nil), s.Attrs.List...)
	for _, a := range ancestors {
		if needThread {
			if t := a.Attrs.Str(threadKeys...); t != "" {
				out.Attrs.List = append(out.Attrs.List, schema.Attr{Key: schema.KeyConversationID, Value: t})
				needThread = false
			}
		}
		if needSpeaker {
			if name := agentNameOf(a); name != "" {
				out.Attrs.List = append(out.Attrs.List, schema.Attr{Key: schema.KeyAgentName, Value: name})
				needSpeaker = false
			}
		}
		if needProvider {
			if p := resolve(a).provider; p != "" {
				out.Attrs.List = append(out.Attrs.List, schema.Attr{Key: schema.KeyProviderName, Value: p})
				needProvider = false
			}
		}
		system, input := contextOf(a)
		if needSystem && len(system) > 0 {
			out.inherited.system, needSystem = system, false
		}
		if needInput && len(input) > 0 {
			out.inherited.input, needInput = input, false
			if needSystem && hasSystem(input) {
				needSystem = false
			}
		}
	}
	return out
}

// Donor reports whether s, a span that is no call, carries something the
// calls under it may inherit.
func Donor(s Span) bool {
	if IsCall(s) || agentSpan(s) {
		return false
	}
	if agentNameOf(s) != "" || resolve(s).provider != "" {
		return true
	}
	system, input := contextOf(s)
	return len(system) > 0 || len(input) > 0
}

// agentNameOf is the agent an ancestor span names.
func agentNameOf(a Span) string {
	if n := a.Attrs.Str(schema.KeySpeaker, schema.KeyAgentName); n != "" {
		return n
	}
	if a.Attrs.Str(mastraSpanType) == mastraAgentRun {
		return a.Attrs.Str(mastraAgentID)
	}
	if oiKind(a.Attrs) == oiKindAgent {
		if n := a.Attrs.Str(oiAgentName, oiGraphNodeID); n != "" {
			return n
		}
		return a.Name
	}
	return ""
}

// contextOf is the system instructions and the input an ancestor span
// gives the calls under it: GenAI content attributes (an agent's or a
// model generation's), or an OpenInference AGENT or CHAIN span's input.
func contextOf(a Span) (system []genai.Part, input []genai.Message) {
	if x, ok := callExchange(a); ok {
		input = x.input
	} else if x, ok := genAIMessages(a.Attrs, nil); ok {
		input = x.input
	} else if k := oiKind(a.Attrs); k == oiKindAgent || k == "CHAIN" {
		if v := a.Attrs.Str(oiInputValue); v != "" {
			input = inputMessages(v)
		}
	}
	if hasSystem(input) {
		system = input[0].Parts
	}
	return system, input
}

// metadataProvider reads the provider LangChain records in the
// OpenInference metadata attribute (ls_provider).
func metadataProvider(a Attrs) string {
	v := strings.TrimSpace(a.Str(oiMetadata))
	if !strings.HasPrefix(v, "{") {
		return ""
	}
	var m struct {
		Provider string `json:"ls_provider"`
	}
	if json.Unmarshal([]byte(v), &m) != nil {
		return ""
	}
	return m.Provider
}
