package mapping

import (
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// OpenInference (Arize, Phoenix): LLM spans with indexed
// llm.input_messages.N.* and llm.output_messages.N.* attributes (else
// input.value, output.value), and TOOL spans (docs/design/mapping.md).

const (
	oiSpanKind         = "openinference.span.kind"
	oiInputMessages    = "llm.input_messages."
	oiOutputMessages   = "llm.output_messages."
	oiPrompts          = "llm.prompts."
	oiChoices          = "llm.choices."
	oiModel            = "llm.model_name"
	oiRequestModel     = "llm.request.model_name"
	oiResponseModel    = "llm.response.model_name"
	oiSystem           = "llm.system"
	oiProvider         = "llm.provider"
	oiPromptTokens     = "llm.token_count.prompt"
	oiCompletionTokens = "llm.token_count.completion"
	oiTotalTokens      = "llm.token_count.total"
	oiCacheReadTokens  = "llm.token_count.prompt_details.cache_read"
	oiCacheWriteTokens = "llm.token_count.prompt_details.cache_write"
	oiReasoningTokens  = "llm.token_count.completion_details.reasoning"
	oiCostTotal        = "llm.cost.total"
	oiInputValue       = "input.value"
	oiInputMimeType    = "input.mime_type"
	oiOutputValue      = "output.value"
	oiOutputMimeType   = "output.mime_type"
	oiToolName         = "tool.name"
	oiToolID           = "tool.id"
	oiToolCallID       = "tool_call.id"
	oiToolCallName     = "tool_call.function.name"
	oiToolCallArgs     = "tool_call.function.arguments"
)

// OpenInference span kinds that convtrace maps.
const (
	oiKindLLM   = "LLM"
	oiKindTool  = "TOOL"
	oiKindEmbed = "EMBEDDING"
	oiKindAgent = "AGENT"
)

var (
	_ = prefixes(oiInputMessages, oiOutputMessages, oiPrompts, oiChoices)
	_ = keys(oiSpanKind, oiInputValue, oiInputMimeType, oiOutputValue, oiOutputMimeType, oiToolCallName, oiToolCallArgs)
)

func oiKind(a Attrs) string { return strings.ToUpper(a.Str(oiSpanKind)) }

// openInferenceCall reads an LLM span.
func openInferenceCall(s Span) (exchange, bool) {
	a := s.Attrs
	kind := oiKind(a)
	if kind != oiKindLLM && (kind != "" || !hasOpenInferenceMessages(a)) {
		return exchange{}, false
	}
	var x exchange
	for _, f := range indexed(a, oiInputMessages) {
		x.input = append(x.input, oiMessage(f, "user"))
	}
	for _, f := range indexed(a, oiOutputMessages) {
		x.output = append(x.output, oiMessage(f, "assistant"))
	}
	if len(x.input) == 0 { // completions API
		for _, f := range indexed(a, oiPrompts) {
			x.input = append(x.input, genai.Message{Role: "user", Parts: genai.TextOrParts(f["prompt.text"])})
		}
	}
	if len(x.output) == 0 {
		for _, f := range indexed(a, oiChoices) {
			x.output = append(x.output, genai.Message{Role: "assistant", Parts: genai.TextOrParts(f["completion.text"])})
		}
	}
	if len(x.input) == 0 {
		x.inputText = a.Str(oiInputValue)
	}
	if len(x.output) == 0 {
		x.outputText = a.Str(oiOutputValue)
	}
	return x, true
}

func hasOpenInferenceMessages(a Attrs) bool {
	for _, kv := range a.List {
		if isIndexed(kv.Key, oiInputMessages) || isIndexed(kv.Key, oiOutputMessages) {
			return true
		}
	}
	return false
}

func hasOpenInferenceContent(a Attrs) bool {
	if hasOpenInferenceMessages(a) {
		return true
	}
	if oiKind(a) != oiKindLLM {
		return false
	}
	_, ok := a.Get(oiInputValue, oiOutputValue)
	return ok
}

// oiMessage reads the fields of one indexed message (keys relative to
// llm.input_messages.N.).
func oiMessage(f map[string]string, role string) genai.Message {
	m := genai.Message{Role: f["message.role"]}
	if m.Role == "" {
		m.Role = role
	}
	if m.Role == "tool" {
		m.Parts = []genai.Part{genai.ToolResponse(f["message.tool_call_id"], oiText(f))}
		return m
	}
	if c, ok := f["message.content"]; ok {
		m.Parts = genai.TextOrParts(c)
	} else {
		for _, c := range indexed(attrsOf(f), "message.contents.") {
			m.Parts = append(m.Parts, oiContentPart(c))
		}
	}
	for _, c := range indexed(attrsOf(f), "message.tool_calls.") {
		m.Parts = append(m.Parts, genai.ToolCall(c["tool_call.id"], c["tool_call.function.name"], c["tool_call.function.arguments"]))
	}
	if name := f["message.function_call_name"]; name != "" { // legacy function calling
		m.Parts = append(m.Parts, genai.ToolCall("", name, f["message.function_call_arguments_json"]))
	}
	return m
}

// oiText returns a message's text, from content or its text contents.
func oiText(f map[string]string) string {
	if c, ok := f["message.content"]; ok {
		return c
	}
	var texts []string
	for _, c := range indexed(attrsOf(f), "message.contents.") {
		if t, ok := c["message_content.text"]; ok {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n")
}

// oiContentPart reads one message_content item.
func oiContentPart(c map[string]string) genai.Part {
	switch typ := c["message_content.type"]; typ {
	case "", genai.PartText:
		return genai.Text(c["message_content.text"])
	case genai.PartReasoning:
		return genai.Part{Type: genai.PartReasoning, Content: c["message_content.text"]}
	case "image":
		return genai.Part{Type: "uri", Raw: genai.Marshal(struct {
			Type     string `json:"type"`
			Modality string `json:"modality"`
			URI      string `json:"uri"`
		}{"uri", "image", c["message_content.image.image.url"]})}
	default:
		return genai.Part{Type: typ, Raw: genai.Marshal(struct {
			Type string `json:"type"`
		}{typ})}
	}
}

// openInferenceOperation names the operation of an OpenInference span in
// GenAI terms.
func openInferenceOperation(a Attrs) string {
	switch oiKind(a) {
	case oiKindLLM:
		return schema.OperationChat
	case oiKindTool:
		return schema.OperationExecuteTool
	case oiKindEmbed:
		return schema.OperationEmbeddings
	case oiKindAgent:
		return schema.OperationInvokeAgent
	}
	return ""
}

// openInferenceTool reads a TOOL span: arguments from input.value (else
// tool_call.function.arguments), result from output.value.
func openInferenceTool(s Span) (toolRun, bool) {
	a := s.Attrs
	if oiKind(a) != oiKindTool {
		return toolRun{}, false
	}
	run := toolRun{arguments: a.Str(oiInputValue, oiToolCallArgs), result: a.Str(oiOutputValue)}
	if _, ok := a.Get(toolNameKeys...); !ok {
		run.name = a.Str(oiToolCallName)
	}
	return run, true
}
