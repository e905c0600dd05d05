package llmhttp

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// Anthropic Messages (POST /v1/messages), whole or streamed.

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// usage counts cache reads and writes in the input tokens, as OpenAI's
// prompt_tokens and the GenAI conventions do; Anthropic's input_tokens
// leaves them out.
func (u anthropicUsage) usage() instrument.Usage {
	return instrument.Usage{
		InputTokens:      int(schema.InputTokens(uint64(u.InputTokens), uint64(u.CacheReadInputTokens), uint64(u.CacheCreationInputTokens), true)),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthropicMessage struct {
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      *anthropicUsage  `json:"usage"`
}

func (a *answer) anthropicMessage(body []byte) {
	var m anthropicMessage
	if json.Unmarshal(body, &m) != nil {
		return
	}
	a.model, a.finish = m.Model, m.StopReason
	if m.Usage != nil {
		a.setUsage(m.Usage.usage())
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			a.text.WriteString(b.Text)
		case "tool_use", "server_tool_use":
			a.addCall(b.ID, b.Name, string(b.Input))
		}
	}
}

// anthropicEvent reads one event of a Messages stream. The usage of
// message_start holds the input side; message_delta's holds the output
// tokens and, on some servers, updated input counts.
func (a *answer) anthropicEvent(data []byte) {
	var e struct {
		Type         string           `json:"type"`
		Index        int              `json:"index"`
		Message      anthropicMessage `json:"message"`
		ContentBlock anthropicBlock   `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
		Usage *anthropicUsage `json:"usage"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	key := fmt.Sprint(e.Index)
	switch e.Type {
	case "message_start":
		a.model = e.Message.Model
		if e.Message.Usage != nil {
			a.setUsage(e.Message.Usage.usage())
		}
	case "content_block_start":
		switch e.ContentBlock.Type {
		case "text":
			a.text.WriteString(e.ContentBlock.Text)
		case "tool_use", "server_tool_use":
			c := a.call(key)
			c.id, c.name = e.ContentBlock.ID, e.ContentBlock.Name
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			a.text.WriteString(e.Delta.Text)
		case "input_json_delta":
			if c, ok := a.byKey[key]; ok {
				c.args.WriteString(e.Delta.PartialJSON)
			}
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			a.finish = e.Delta.StopReason
		}
		if e.Usage != nil {
			u := instrument.Usage{}
			if a.usage != nil {
				u = *a.usage
			}
			d := e.Usage.usage()
			u.OutputTokens = d.OutputTokens
			if d.InputTokens > 0 {
				u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens = d.InputTokens, d.CacheReadTokens, d.CacheWriteTokens
			}
			a.setUsage(u)
		}
	case "error":
		a.err = providerError(http.StatusOK, data)
	}
}

// --- OpenAI Responses ---
