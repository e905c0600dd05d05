package frameworks

import (
	"encoding/json"
	"net/http"

	"github.com/convtrace/convtrace/internal/testkit"
)

type messagesRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

func (p *Provider) messages(w http.ResponseWriter, r *http.Request) {
	var req messagesRequest
	body, ok := readJSON(w, r, &req)
	if !ok {
		return
	}
	c := conversation{hasTools: len(req.Tools) > 0}
	if sys := textOf(req.System); sys != "" {
		c.system = append(c.system, sys)
	}
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					c.toolResult = true
				}
			}
		}
		c.user = append(c.user, textOf(m.Content))
	}
	kind, usage := c.answer()
	p.record(r, body, req.Stream, kind)
	model := modelOr(req.Model, AnthropicModel)
	id := "msg_fake_" + kind
	var block map[string]any
	stop := "end_turn"
	if kind == AnswerToolCall {
		block = map[string]any{"type": "tool_use", "id": "toolu_weather_1", "name": ToolName, "input": map[string]any{"city": "Paris"}}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": answerText(kind)}
	}
	usageJSON := func(out int) map[string]any {
		return map[string]any{
			"input_tokens": usage.In, "output_tokens": out,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		}
	}
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": usageJSON(usage.Out),
		})
		return
	}
	s := testkit.NewSSE(w)
	s.Event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usageJSON(1),
	}})
	if kind == AnswerToolCall {
		s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": block["id"], "name": ToolName, "input": map[string]any{},
		}})
		s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": ToolArguments}})
	} else {
		s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, word := range splitWords(answerText(kind)) {
			s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": word}})
		}
	}
	s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.Event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.Out}})
	s.Event("message_stop", map[string]any{"type": "message_stop"})
}
