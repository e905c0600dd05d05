package agentcheck

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
)

type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// shellArguments builds the function call arguments for whichever shell
// tool the request offers.
func shellArguments(tool, command string) string {
	var v any
	switch tool {
	case "shell":
		v = map[string]any{"command": []string{"bash", "-lc", command}}
	case "exec_command":
		v = map[string]any{"cmd": command}
	default: // shell_command and unknown
		v = map[string]any{"command": command}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p *FakeProvider) openAIResponses(w http.ResponseWriter, req ProviderRequest) {
	var rr responsesRequest
	if err := json.Unmarshal(req.Body, &rr); err != nil {
		req.Kind = "bad_request"
		p.record(req)
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Stream = rr.Model, rr.Stream
	shellTool := ""
	for _, t := range rr.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		req.Tools = append(req.Tools, name)
		switch name {
		case "shell", "shell_command", "exec_command":
			if shellTool == "" || name == "shell_command" {
				shellTool = name
			}
		}
	}
	hasOutput := false
	for _, it := range rr.Input {
		if bytes.Contains(it, []byte(`"function_call_output"`)) || bytes.Contains(it, []byte(`"custom_tool_call_output"`)) {
			hasOutput = true
		}
	}
	switch {
	case shellTool != "" && hasOutput:
		req.Kind = "final"
	case shellTool != "":
		req.Kind = "tool_call"
	default:
		req.Kind = "side"
	}
	seq := p.record(req)
	respID := p.id("resp", seq)
	model := rr.Model
	var usage Usage
	var item map[string]any
	switch req.Kind {
	case "tool_call":
		usage = p.Script.ToolUsage
		item = map[string]any{
			"type": "function_call", "id": p.id("fc", seq),
			"call_id": p.id("call", seq), "name": shellTool,
			"arguments": shellArguments(shellTool, p.Script.Command), "status": "completed",
		}
	case "final":
		usage = p.Script.FinalUsage
		item = openAIMessage(p.id("msg", seq), p.Script.FinalText)
	default:
		usage = p.Script.SideUsage
		item = openAIMessage(p.id("msg", seq), p.Script.SideText)
	}
	base := map[string]any{
		"id": respID, "object": "response", "created_at": time.Now().Unix(),
		"model": model, "status": "in_progress", "output": []any{},
	}
	done := map[string]any{}
	for k, v := range base {
		done[k] = v
	}
	done["status"] = "completed"
	done["output"] = []any{item}
	done["usage"] = map[string]any{
		"input_tokens":          usage.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": usage.CacheRead},
		"output_tokens":         usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": usage.Reasoning},
		"total_tokens":          usage.Input + usage.Output,
	}
	if !rr.Stream {
		writeJSON(w, done)
		return
	}
	w.Header().Set("x-request-id", p.id("req", seq))
	sse := testkit.NewSSE(w)
	sse.Event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": base})
	sse.Event("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": base})
	n := 2
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	if item["type"] == "message" {
		added["content"] = []any{}
		added["status"] = "in_progress"
	} else {
		added["arguments"] = ""
		added["status"] = "in_progress"
	}
	sse.Event("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": n, "output_index": 0, "item": added})
	n++
	if item["type"] == "message" {
		text := item["content"].([]any)[0].(map[string]any)["text"].(string)
		sse.Event("response.content_part.added", map[string]any{
			"type": "response.content_part.added", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}},
		})
		n++
		half := len(text) / 2
		for _, part := range []string{text[:half], text[half:]} {
			sse.Event("response.output_text.delta", map[string]any{
				"type": "response.output_text.delta", "sequence_number": n, "item_id": item["id"],
				"output_index": 0, "content_index": 0, "delta": part,
			})
			n++
		}
		sse.Event("response.output_text.done", map[string]any{
			"type": "response.output_text.done", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0, "text": text,
		})
		n++
		sse.Event("response.content_part.done", map[string]any{
			"type": "response.content_part.done", "sequence_number": n, "item_id": item["id"],
			"output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}},
		})
		n++
	} else {
		sse.Event("response.function_call_arguments.delta", map[string]any{
			"type": "response.function_call_arguments.delta", "sequence_number": n,
			"item_id": item["id"], "output_index": 0, "delta": item["arguments"],
		})
		n++
		sse.Event("response.function_call_arguments.done", map[string]any{
			"type": "response.function_call_arguments.done", "sequence_number": n,
			"item_id": item["id"], "output_index": 0, "arguments": item["arguments"],
		})
		n++
	}
	sse.Event("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": n, "output_index": 0, "item": item})
	n++
	sse.Event("response.completed", map[string]any{"type": "response.completed", "sequence_number": n, "response": done})
}

func openAIMessage(id, text string) map[string]any {
	return map[string]any{
		"type": "message", "id": id, "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
	}
}

// id returns a response-unique id such as toolu_fake1a2b3c4d_0001.
