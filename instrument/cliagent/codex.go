package cliagent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/convtrace/convtrace/instrument"
)

// codexLine is one line of `codex exec --json`.
type codexLine struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Message  string     `json:"message"`
	Item     *codexItem `json:"item"`
	Usage    *struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query   string          `json:"query"`
	Items   json.RawMessage `json:"items"`
	Message string          `json:"message"`
}

// codexParser reads `codex exec --json` lines. It remembers which items
// started, so an item seen only on completion still gets its tool call.
type codexParser struct {
	started map[string]bool
}

func newCodexParser() *codexParser { return &codexParser{started: map[string]bool{}} }

// line returns the events of one line.
func (p *codexParser) line(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return unknown(line)
	}
	switch l.Type {
	case "thread.started":
		return []Event{{Kind: KindSession, SessionID: l.ThreadID}}
	case "turn.started":
		return nil
	case "turn.completed":
		e := Event{Kind: KindResult}
		if u := l.Usage; u != nil {
			e.Usage = &instrument.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CachedInputTokens}
		}
		return []Event{e}
	case "turn.failed":
		msg := "turn failed"
		if l.Error != nil && l.Error.Message != "" {
			msg = l.Error.Message
		}
		return []Event{{Kind: KindError, Content: msg}}
	case "error":
		return []Event{{Kind: KindError, Content: l.Message}}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return unknown(line)
		}
		return p.item(l.Type, *l.Item)
	}
	return unknown(line)
}

func (p *codexParser) item(phase string, it codexItem) []Event {
	switch it.Type {
	case "agent_message":
		if phase == "item.completed" {
			return []Event{{Kind: KindResponse, Content: it.Text}}
		}
		return nil
	case "reasoning":
		if phase == "item.completed" {
			return []Event{{Kind: KindReasoning, Content: it.Text}}
		}
		return nil
	case "todo_list":
		return []Event{{Kind: KindTodoList, Content: compact(it.Items)}}
	case "error":
		if phase == "item.completed" {
			return []Event{{Kind: KindError, Content: it.Message}}
		}
		return nil
	}
	name, input, ok := codexTool(it)
	if !ok {
		return nil
	}
	var out []Event
	if !p.started[it.ID] {
		p.started[it.ID] = true
		out = append(out, Event{Kind: KindToolCall, ToolName: name, CallID: it.ID, Content: input})
	}
	if phase != "item.completed" {
		return out
	}
	delete(p.started, it.ID)
	result, failed := codexToolResult(it)
	kind := KindToolResult
	if failed {
		kind = KindToolResultError
	}
	return append(out, Event{Kind: kind, ToolName: name, CallID: it.ID, Content: result})
}

// codexTool names a tool item and renders its input as JSON.
func codexTool(it codexItem) (name, input string, ok bool) {
	var v any
	switch it.Type {
	case "command_execution":
		v = map[string]string{"command": it.Command}
	case "file_change":
		v = map[string]json.RawMessage{"changes": it.Changes}
	case "mcp_tool_call":
		if it.Server != "" {
			name = it.Server + "." + it.Tool
		} else {
			name = it.Tool
		}
		return name, compact(it.Arguments), true
	case "web_search":
		v = map[string]string{"query": it.Query}
	default:
		return "", "", false
	}
	b, _ := json.Marshal(v)
	return it.Type, string(b), true
}

// codexToolResult is a completed tool item's output and whether it failed.
func codexToolResult(it codexItem) (string, bool) {
	failed := it.Status == "failed"
	switch it.Type {
	case "command_execution":
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failed = true
			return fmt.Sprintf("%s\nexit code %d", it.AggregatedOutput, *it.ExitCode), true
		}
		return it.AggregatedOutput, failed
	case "mcp_tool_call":
		if it.Error != nil && it.Error.Message != "" {
			return it.Error.Message, true
		}
		return compact(it.Result), failed
	case "file_change":
		return it.Status, failed
	}
	return it.Status, failed
}
