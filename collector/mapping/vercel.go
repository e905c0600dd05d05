package mapping

import (
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/schema/genai"
)

// The Vercel AI SDK's telemetry: its provider spans (doGenerate, doStream)
// carry the calls, its wrapper spans are kept in spans alone, and
// ai.telemetry.* names the thread (docs/design/mapping.md).
const (
	vcOperationID     = "ai.operationId"
	vcPromptMessages  = "ai.prompt.messages"
	vcPrompt          = "ai.prompt"
	vcResponseText    = "ai.response.text"
	vcResponseTools   = "ai.response.toolCalls"
	vcResponseObject  = "ai.response.object"
	vcResponseModel   = "ai.response.model"
	vcModelID         = "ai.model.id"
	vcModelProvider   = "ai.model.provider"
	vcPromptTokens    = "ai.usage.promptTokens"
	vcInputTokens     = "ai.usage.inputTokens"
	vcCompletionToks  = "ai.usage.completionTokens"
	vcOutputTokens    = "ai.usage.outputTokens"
	vcCachedTokens    = "ai.usage.cachedInputTokens"
	vcReasoningTokens = "ai.usage.reasoningTokens"
	vcFunctionID      = "ai.telemetry.functionId"
	vcMetadata        = "ai.telemetry.metadata."
	vcToolName        = "ai.toolCall.name"
	vcToolID          = "ai.toolCall.id"
	vcToolArgs        = "ai.toolCall.args"
	vcToolInput       = "ai.toolCall.input"
	vcToolResult      = "ai.toolCall.result"
	vcToolOutput      = "ai.toolCall.output"
)

var _ = keys(vcOperationID, vcPromptMessages, vcPrompt, vcResponseText, vcResponseTools, vcResponseObject,
	vcToolArgs, vcToolInput, vcToolResult, vcToolOutput, vcModelProvider)

// vercelOperation is the span's AI SDK operation: ai.generateText,
// ai.streamText.doStream, ai.toolCall…; "" for a span the SDK did not make.
func vercelOperation(a Attrs) string {
	op := a.Str(vcOperationID)
	if !strings.HasPrefix(op, "ai.") {
		return ""
	}
	return op
}

// vercelProviderCall says whether op is one provider call's span.
func vercelProviderCall(op string) bool {
	return strings.HasSuffix(op, ".doGenerate") || strings.HasSuffix(op, ".doStream")
}

// vercelWrapper says whether s is an AI SDK wrapper span (generateText and
// the like): its provider calls are its children, so it maps to no turns.
func vercelWrapper(s Span) bool {
	op := vercelOperation(s.Attrs)
	return op != "" && op != "ai.toolCall" && !vercelProviderCall(op)
}

// vercelCall reads an AI SDK provider call span.
func vercelCall(s Span) (exchange, bool) {
	a := s.Attrs
	if !vercelProviderCall(vercelOperation(a)) {
		return exchange{}, false
	}
	var x exchange
	if ms, ok := genai.Parse(a.Str(vcPromptMessages)); ok {
		x.input = ms
	} else {
		x.inputText = a.Str(vcPrompt)
	}
	answer := genai.Message{Role: "assistant"}
	if text := a.Str(vcResponseText, vcResponseObject); text != "" {
		answer.Parts = append(answer.Parts, genai.Text(text))
	}
	var calls []map[string]json.RawMessage
	_ = json.Unmarshal([]byte(a.Str(vcResponseTools)), &calls)
	for _, c := range calls {
		args := c["args"]
		if args == nil {
			args = c["input"]
		}
		answer.Parts = append(answer.Parts, genai.Part{Type: genai.PartToolCall, ID: genai.String(c["toolCallId"]),
			Name: genai.String(c["toolName"]), Arguments: genai.Arguments(args)})
	}
	if len(answer.Parts) > 0 {
		x.output = []genai.Message{answer}
	}
	return x, true
}

// hasVercelContent reports whether a is an AI SDK provider call that
// recorded its prompt or answer.
func hasVercelContent(a Attrs) bool {
	if !vercelProviderCall(vercelOperation(a)) {
		return false
	}
	_, ok := a.Get(vcPromptMessages, vcPrompt, vcResponseText, vcResponseTools, vcResponseObject)
	return ok
}

// vercelTool reads an AI SDK ai.toolCall span.
func vercelTool(s Span) (toolRun, bool) {
	a := s.Attrs
	if vercelOperation(a) != "ai.toolCall" {
		return toolRun{}, false
	}
	return toolRun{
		name: a.Str(vcToolName), callID: a.Str(vcToolID),
		arguments: a.Str(vcToolArgs, vcToolInput), result: a.Str(vcToolResult, vcToolOutput),
	}, true
}

// vercelProvider is the provider of an AI SDK model id such as
// "openai.chat" or "anthropic.messages": the part before the dot.
func vercelProvider(a Attrs, provider string) string {
	if vercelOperation(a) == "" {
		return provider
	}
	name, _, _ := strings.Cut(provider, ".")
	return name
}
