package mapping

import (
	"sort"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// OpenLLMetry (Traceloop): messages as indexed gen_ai.prompt.N.* and
// gen_ai.completion.N.* attributes, tools as traceloop.span.kind "tool"
// (docs/design/mapping.md).

const (
	olPromptPrefix        = "gen_ai.prompt."
	olCompletionPrefix    = "gen_ai.completion."
	olPromptTokens        = "gen_ai.usage.prompt_tokens"
	olCompletionTokens    = "gen_ai.usage.completion_tokens"
	olTotalTokens         = "llm.usage.total_tokens"
	olCacheReadTokens     = "gen_ai.usage.cache_read_input_tokens"
	olCacheCreationTokens = "gen_ai.usage.cache_creation_input_tokens"
	olRequestType         = "llm.request.type"
	olSpanKind            = "traceloop.span.kind"
	olEntityName          = "traceloop.entity.name"
	olEntityInput         = "traceloop.entity.input"
	olEntityOutput        = "traceloop.entity.output"
)

var (
	_ = prefixes(olPromptPrefix, olCompletionPrefix)
	_ = keys(olRequestType, olSpanKind, olEntityName, olEntityInput, olEntityOutput)
)

// openLLMetryCall reads a call recorded with indexed prompt and completion
// attributes.
func openLLMetryCall(s Span) (exchange, bool) {
	prompts, completions := indexed(s.Attrs, olPromptPrefix), indexed(s.Attrs, olCompletionPrefix)
	if len(prompts) == 0 && len(completions) == 0 {
		return exchange{}, false
	}
	var x exchange
	for _, f := range prompts {
		x.input = append(x.input, olMessage(f, "user"))
	}
	for _, f := range completions {
		m := olMessage(f, "assistant")
		m.FinishReason = f["finish_reason"]
		x.output = append(x.output, m)
	}
	return x, true
}

func hasOpenLLMetryContent(a Attrs) bool {
	for _, kv := range a.List {
		if isIndexed(kv.Key, olPromptPrefix) || isIndexed(kv.Key, olCompletionPrefix) {
			return true
		}
	}
	return false
}

// olMessage reads the fields of one indexed message (keys relative to
// gen_ai.prompt.N.).
func olMessage(f map[string]string, role string) genai.Message {
	m := genai.Message{Role: f["role"]}
	if m.Role == "" {
		m.Role = role
	}
	content, ok := f["content"]
	if !ok {
		content = f["user"] // completions API: gen_ai.prompt.0.user
	}
	if m.Role == "tool" {
		m.Parts = []genai.Part{genai.ToolResponse(f["tool_call_id"], content)}
		return m
	}
	m.Parts = genai.TextOrParts(content)
	for _, c := range indexed(attrsOf(f), "tool_calls.") {
		m.Parts = append(m.Parts, genai.ToolCall(c["id"], c["name"], c["arguments"]))
	}
	if name := f["function_call.name"]; name != "" {
		m.Parts = append(m.Parts, genai.ToolCall(f["function_call.id"], name, f["function_call.arguments"]))
	}
	return m
}

// openLLMetryOperation names the operation of a span that gives only
// llm.request.type, in GenAI terms.
func openLLMetryOperation(a Attrs) string {
	if strings.EqualFold(a.Str(olSpanKind), "tool") {
		return schema.OperationExecuteTool
	}
	switch t := a.Str(olRequestType); t {
	case "completion":
		return schema.OperationTextCompletion
	case "embedding":
		return schema.OperationEmbeddings
	default:
		return t
	}
}

// openLLMetryTool reads a tool span of the Traceloop SDK (a function
// decorated with @tool). It records no call id to pair by.
func openLLMetryTool(s Span) (toolRun, bool) {
	a := s.Attrs
	if !strings.EqualFold(a.Str(olSpanKind), "tool") {
		return toolRun{}, false
	}
	return toolRun{name: a.Str(olEntityName), arguments: a.Str(olEntityInput), result: a.Str(olEntityOutput)}, true
}

// indexed groups the attributes prefix.N.rest by N, in index order, each
// group keyed by rest.
func indexed(a Attrs, prefix string) []map[string]string {
	var groups map[int]map[string]string
	for _, kv := range a.List {
		if !strings.HasPrefix(kv.Key, prefix) {
			continue
		}
		num, rest, ok := strings.Cut(kv.Key[len(prefix):], ".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			continue
		}
		if groups == nil {
			groups = map[int]map[string]string{}
		}
		g := groups[n]
		if g == nil {
			g = map[string]string{}
			groups[n] = g
		}
		if _, dup := g[rest]; !dup {
			g[rest] = kv.Value
		}
	}
	if len(groups) == 0 {
		return nil
	}
	idx := make([]int, 0, len(groups))
	for n := range groups {
		idx = append(idx, n)
	}
	sort.Ints(idx)
	out := make([]map[string]string, len(idx))
	for i, n := range idx {
		out[i] = groups[n]
	}
	return out
}

// isIndexed reports whether key is prefix followed by an index.
func isIndexed(key, prefix string) bool {
	return len(key) > len(prefix) && strings.HasPrefix(key, prefix) && key[len(prefix)] >= '0' && key[len(prefix)] <= '9'
}

// attrsOf turns a group of fields back into attributes, to index further.
func attrsOf(f map[string]string) Attrs {
	list := make([]schema.Attr, 0, len(f))
	for k, v := range f {
		list = append(list, schema.Attr{Key: k, Value: v})
	}
	return Attrs{List: list}
}
