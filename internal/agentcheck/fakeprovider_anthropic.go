package agentcheck

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/convtrace/convtrace/internal/testkit"
)

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (p *FakeProvider) anthropicMessages(w http.ResponseWriter, req ProviderRequest) {
	var ar anthropicRequest
	if err := json.Unmarshal(req.Body, &ar); err != nil {
		req.Kind = "bad_request"
		p.record(req)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Stream = ar.Model, ar.Stream
	hasBash := false
	for _, t := range ar.Tools {
		req.Tools = append(req.Tools, t.Name)
		if t.Name == "Bash" {
			hasBash = true
		}
	}
	lastHasToolResult := false
	if n := len(ar.Messages); n > 0 {
		lastHasToolResult = bytes.Contains(ar.Messages[n-1].Content, []byte(`"tool_result"`))
	}
	switch {
	case hasBash && lastHasToolResult:
		req.Kind = "final"
	case hasBash:
		req.Kind = "tool_call"
	default:
		req.Kind = "side"
	}
	seq := p.record(req)
	msgID := p.id("msg", seq)
	var usage Usage
	var block map[string]any
	var stop string
	switch req.Kind {
	case "tool_call":
		usage, stop = p.Script.ToolUsage, "tool_use"
		block = map[string]any{
			"type": "tool_use", "id": p.id("toolu", seq), "name": "Bash",
			"input": map[string]any{"command": p.Script.Command, "description": "Print hello"},
		}
	case "final":
		usage, stop = p.Script.FinalUsage, "end_turn"
		block = map[string]any{"type": "text", "text": p.Script.FinalText}
	default:
		usage, stop = p.Script.SideUsage, "end_turn"
		block = map[string]any{"type": "text", "text": p.Script.SideText}
	}
	model := ar.Model
	if model == "" {
		model = "claude-sonnet-4-5-20250929"
	}
	w.Header().Set("request-id", p.id("req", seq))
	if !ar.Stream {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(usage, usage.Output),
		})
		return
	}
	sse := testkit.NewSSE(w)
	sse.Event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": anthropicUsage(usage, 1),
		},
	})
	switch block["type"] {
	case "tool_use":
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		sse.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		args, _ := json.Marshal(block["input"])
		half := len(args) / 2
		for _, part := range []string{string(args[:half]), string(args[half:])} {
			sse.Event("content_block_delta", map[string]any{
				"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part},
			})
		}
	default:
		text := block["text"].(string)
		sse.Event("content_block_start", map[string]any{
			"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""},
		})
		half := len(text) / 2
		for _, part := range []string{text[:half], text[half:]} {
			sse.Event("content_block_delta", map[string]any{
				"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part},
			})
		}
	}
	sse.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse.Event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.Output},
	})
	sse.Event("message_stop", map[string]any{"type": "message_stop"})
}

func anthropicUsage(u Usage, output int) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input,
		"output_tokens":               output,
		"cache_read_input_tokens":     u.CacheRead,
		"cache_creation_input_tokens": u.CacheCreate,
		"service_tier":                "standard",
	}
}

// ---- OpenAI Responses API ----
