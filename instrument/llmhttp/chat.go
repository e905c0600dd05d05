package llmhttp

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/convtrace/convtrace/instrument"
)

// Chat Completions (POST /v1/chat/completions), whole or streamed.

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u chatUsage) usage() instrument.Usage {
	return instrument.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
	}
}

type chatToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatMessage struct {
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls"`
}

type chatBody struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		Delta        chatMessage `json:"delta"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatCompletion reads a Chat Completions response body. Only the first
// choice is recorded.
func (a *answer) chatCompletion(body []byte) {
	var b chatBody
	if json.Unmarshal(body, &b) != nil {
		return
	}
	a.model = b.Model
	if b.Usage != nil {
		a.setUsage(b.Usage.usage())
	}
	if len(b.Choices) == 0 {
		return
	}
	c := b.Choices[0]
	a.finish = c.FinishReason
	if c.Message.Content != nil {
		a.text.WriteString(*c.Message.Content)
	} else if c.Message.Refusal != nil {
		a.text.WriteString(*c.Message.Refusal)
	}
	for _, tc := range c.Message.ToolCalls {
		a.addCall(tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
}

// chatChunk reads one streamed Chat Completions chunk.
func (a *answer) chatChunk(data []byte) {
	var b chatBody
	if json.Unmarshal(data, &b) != nil {
		return
	}
	if b.Model != "" {
		a.model = b.Model
	}
	if b.Usage != nil {
		a.setUsage(b.Usage.usage())
	}
	if len(b.Error) > 0 && string(b.Error) != "null" {
		a.err = providerError(http.StatusOK, data)
	}
	for _, c := range b.Choices {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
		if c.Delta.Content != nil {
			a.text.WriteString(*c.Delta.Content)
		}
		for _, tc := range c.Delta.ToolCalls {
			key := tc.ID
			if tc.Index != nil {
				key = fmt.Sprint(*tc.Index)
			}
			call := a.call(key)
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			call.args.WriteString(tc.Function.Arguments)
		}
	}
}

// --- Anthropic Messages ---
