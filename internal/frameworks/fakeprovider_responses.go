package frameworks

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
)

type responsesRequest struct {
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	Instructions string            `json:"instructions"`
	Input        json.RawMessage   `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
}

func (p *Provider) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	body, ok := readJSON(w, r, &req)
	if !ok {
		return
	}
	c := conversation{hasTools: len(req.Tools) > 0}
	if req.Instructions != "" {
		c.system = append(c.system, req.Instructions)
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.user = append(c.user, s)
	} else {
		var items []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(req.Input, &items)
		for _, it := range items {
			switch {
			case it.Type == "function_call_output":
				c.toolResult = true
			case it.Role == "system" || it.Role == "developer":
				c.system = append(c.system, textOf(it.Content))
			case it.Role == "user":
				c.user = append(c.user, textOf(it.Content))
			}
		}
	}
	kind, usage := c.answer()
	p.record(r, body, req.Stream, kind)
	model := modelOr(req.Model, OpenAIModel)
	id := "resp_fake_" + kind
	created := time.Now().Unix()
	var item map[string]any
	if kind == AnswerToolCall {
		item = map[string]any{
			"type": "function_call", "id": "fc_fake_1", "call_id": ToolCallID,
			"name": ToolName, "arguments": ToolArguments, "status": "completed",
		}
	} else {
		item = map[string]any{
			"type": "message", "id": "msg_fake_" + kind, "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": answerText(kind), "annotations": []any{}}},
		}
	}
	response := func(status string, output []any, withUsage bool) map[string]any {
		resp := map[string]any{
			"id": id, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output, "error": nil, "incomplete_details": nil,
			"instructions": nilIfEmpty(req.Instructions), "parallel_tool_calls": true,
			"tool_choice": "auto", "tools": orEmpty(req.Tools), "temperature": 1.0, "top_p": 1.0,
			"previous_response_id": nil, "reasoning": map[string]any{"effort": nil, "summary": nil},
			"text": map[string]any{"format": map[string]any{"type": "text"}}, "truncation": "disabled",
			"metadata": map[string]any{}, "usage": nil,
		}
		if withUsage {
			resp["usage"] = map[string]any{
				"input_tokens": usage.In, "output_tokens": usage.Out, "total_tokens": usage.In + usage.Out,
				"input_tokens_details":  map[string]any{"cached_tokens": 0},
				"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			}
		}
		return resp
	}
	if !req.Stream {
		writeJSON(w, response("completed", []any{item}, true))
		return
	}
	st := testkit.NewSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		st.Event(typ, fields)
	}
	ev("response.created", map[string]any{"response": response("in_progress", []any{}, false)})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []any{}, false)})
	if kind == AnswerToolCall {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"] = ""
		added["status"] = "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": ToolArguments})
		ev("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": ToolArguments})
	} else {
		text := answerText(kind)
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": item["id"], "status": "in_progress", "role": "assistant", "content": []any{},
		}})
		ev("response.content_part.added", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, word := range splitWords(text) {
			ev("response.output_text.delta", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": word, "logprobs": []any{}})
		}
		ev("response.output_text.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "text": text, "logprobs": []any{}})
		ev("response.content_part.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": response("completed", []any{item}, true)})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func orEmpty(v []json.RawMessage) []json.RawMessage {
	if v == nil {
		return []json.RawMessage{}
	}
	return v
}

// ---- Anthropic Messages ----
