package mapping

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// Mastra (@mastra/otel-exporter): a model_step span per provider call, a
// tool_call span per tool run (the span tree: docs/design/mapping.md).

const (
	mastraSpanType  = "mastra.span.type"
	mastraStep      = "model_step"
	mastraTool      = "tool_call"
	mastraInput     = "input"
	mastraOutput    = "output"
	mastraBody      = "body"
	mastraModelID   = "modelId"
	mastraModelMeta = "modelMetadata"
	mastraToolIn    = "gen_ai.tool.input"
	mastraToolOut   = "gen_ai.tool.output"
	mastraAgentRun  = "agent_run"
	mastraAgentID   = "agent.id"
	mastraSessionID = "sessionId" // the agent run's metadata, copied as it is
)

var _ = keys(mastraSpanType, mastraToolIn, mastraToolOut)

// mastraCall reads a model_step span.
func mastraCall(s Span) (exchange, bool) {
	a := s.Attrs
	if a.Str(mastraSpanType) != mastraStep {
		return exchange{}, false
	}
	var x exchange
	var in struct {
		Body struct {
			Instructions json.RawMessage `json:"instructions"`
			Input        json.RawMessage `json:"input"`
			Messages     json.RawMessage `json:"messages"`
		} `json:"body"`
	}
	if json.Unmarshal([]byte(a.Str(mastraInput)), &in) == nil {
		if len(in.Body.Messages) > 0 {
			x.input, _ = genai.Parse(string(in.Body.Messages))
		} else {
			msgs := genai.ResponsesInput(in.Body.Input)
			if sys := genai.StringValue(in.Body.Instructions); sys != "" {
				x.input = append(x.input, genai.Message{Role: "system", Parts: []genai.Part{genai.Text(sys)}})
			}
			for _, m := range msgs {
				// An item that is no message (a reference to an earlier
				// output) is left out.
				if ms, ok := genai.Parse("[" + string(m) + "]"); ok {
					x.input = append(x.input, ms...)
				}
			}
		}
	}
	var out struct {
		Text      string `json:"text"`
		ToolCalls []struct {
			ID   string          `json:"toolCallId"`
			Name string          `json:"toolName"`
			Args json.RawMessage `json:"args"`
		} `json:"toolCalls"`
	}
	if json.Unmarshal([]byte(a.Str(mastraOutput)), &out) == nil {
		m := genai.Message{Role: "assistant"}
		if out.Text != "" {
			m.Parts = append(m.Parts, genai.Text(out.Text))
		}
		for _, c := range out.ToolCalls {
			m.Parts = append(m.Parts, genai.ToolCall(c.ID, c.Name, string(c.Args)))
		}
		if len(m.Parts) > 0 {
			x.output = []genai.Message{m}
		}
	}
	return x, true
}

// mastraAttrs gives a model_step span the GenAI model, provider and usage
// keys its attributes hold in Mastra's own shape, for resolve to read.
func mastraAttrs(a Attrs) []schema.Attr {
	if a.Str(mastraSpanType) != mastraStep {
		return nil
	}
	var out []schema.Attr
	var meta struct {
		ModelID  string `json:"modelId"`
		Provider string `json:"modelProvider"`
	}
	_ = json.Unmarshal([]byte(a.Str(mastraModelMeta)), &meta)
	if m := a.Str(mastraModelID); m != "" || meta.ModelID != "" {
		out = append(out, schema.Attr{Key: schema.KeyRequestModel, Value: cmp.Or(m, meta.ModelID)})
	}
	if meta.Provider != "" {
		out = append(out, schema.Attr{Key: schema.KeyProviderName, Value: meta.Provider})
	}
	var body struct {
		Model string `json:"model"`
		Usage struct {
			Input        json.Number `json:"input_tokens"`
			Output       json.Number `json:"output_tokens"`
			Prompt       json.Number `json:"prompt_tokens"`
			Completion   json.Number `json:"completion_tokens"`
			InputDetails struct {
				Cached json.Number `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputDetails struct {
				Reasoning json.Number `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if json.Unmarshal([]byte(a.Str(mastraBody)), &body) != nil {
		return out
	}
	if body.Model != "" {
		out = append(out, schema.Attr{Key: schema.KeyResponseModel, Value: body.Model})
	}
	u := body.Usage
	for _, k := range []struct {
		key string
		n   json.Number
	}{
		{schema.KeyInputTokens, cmp.Or(u.Input, u.Prompt)}, {schema.KeyOutputTokens, cmp.Or(u.Output, u.Completion)},
		{schema.KeyCacheReadTokens, u.InputDetails.Cached}, {schema.KeyReasoningTokens, u.OutputDetails.Reasoning},
	} {
		if k.n != "" {
			out = append(out, schema.Attr{Key: k.key, Value: k.n.String()})
		}
	}
	return out
}

// mastraToolRun reads a tool_call span.
func mastraToolRun(s Span) (toolRun, bool) {
	a := s.Attrs
	if a.Str(mastraSpanType) != mastraTool {
		return toolRun{}, false
	}
	return toolRun{name: a.Str(schema.KeyToolName), arguments: a.Str(mastraToolIn, mastraInput), result: a.Str(mastraToolOut, mastraOutput)}, true
}

// providerName takes a provider as the AI SDK (and Mastra, through it)
// names it, openai.responses or anthropic.messages, to the GenAI name: the
// API after the dot is not the provider.
func providerName(p string) string {
	name, api, ok := strings.Cut(p, ".")
	switch {
	case !ok:
		return p
	case api == "chat" || api == "responses" || api == "completion" || api == "messages":
		return name
	}
	return p
}
