package cliagent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// claudeLine is one line of Claude Code's --output-format stream-json.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// ParentToolUseID is the Task tool use whose sub-agent said this.
	ParentToolUseID string          `json:"parent_tool_use_id"`
	Model           string          `json:"model"`
	Tools           json.RawMessage `json:"tools"`
	Message         *struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	} `json:"message"`
	RequestID string `json:"request_id"`

	// type stream_event (--include-partial-messages): the API's own
	// stream event, the message it belongs to and the time to its first
	// token.
	Event        *claudeStreamEvent `json:"event"`
	APIMessageID string             `json:"api_message_id"`
	TTFTMS       int64              `json:"ttft_ms"`

	// type result
	Result       string       `json:"result"`
	IsError      bool         `json:"is_error"`
	DurationMS   int64        `json:"duration_ms"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	Errors       []string     `json:"errors"`
	Usage        *claudeUsage `json:"usage"`
}

// claudeUsage is an Anthropic usage object.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// usage is u as instrument counts it: Anthropic's input_tokens leaves
// the cache out.
func (u claudeUsage) usage() instrument.Usage {
	in := schema.InputTokens(uint64(u.InputTokens), uint64(u.CacheReadInputTokens), uint64(u.CacheCreationInputTokens), true)
	return instrument.Usage{InputTokens: int(in), OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

// claudeStreamEvent is the part of a Messages stream event a run reads:
// message_start's message, message_delta's usage and stop reason.
type claudeStreamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string       `json:"id"`
		Model string       `json:"model"`
		Usage *claudeUsage `json:"usage"`
	} `json:"message"`
	Delta *struct {
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *claudeUsage `json:"usage"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseClaude returns the events of one stream-json line. Streaming
// partials (stream_event) and thinking blocks yield none.
func parseClaude(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return unknown(line)
	}
	switch l.Type {
	case "system":
		if l.Subtype != "init" {
			return nil
		}
		content, _ := json.Marshal(struct {
			Model string          `json:"model,omitempty"`
			Tools json.RawMessage `json:"tools,omitempty"`
		}{l.Model, l.Tools})
		return []Event{{Kind: KindSystem, SessionID: l.SessionID, Model: l.Model, Content: string(content)}}
	case "assistant", "user":
		if l.Message == nil {
			return unknown(line)
		}
		events := claudeBlocks(l, line)
		for i := range events {
			events[i].ParentToolUseID = l.ParentToolUseID
			if l.Type == "assistant" && events[i].Kind != KindError {
				events[i].MessageID, events[i].RequestID = l.Message.ID, l.RequestID
				if u := l.Message.Usage; u != nil && i == 0 {
					// The usage as the answer began: input and cache
					// right, output not yet counted.
					usage := u.usage()
					usage.OutputTokens = 0
					events[i].Usage = &usage
				}
			}
		}
		return events
	case "result":
		e := Event{Kind: KindResult, SessionID: l.SessionID, Content: l.Result, CostUSD: l.TotalCostUSD,
			DurationMS: l.DurationMS, IsError: l.IsError}
		if e.Content == "" && len(l.Errors) > 0 {
			e.Content = strings.Join(l.Errors, "\n")
		}
		if e.Content == "" && l.IsError {
			e.Content = l.Subtype
		}
		if u := l.Usage; u != nil {
			usage := u.usage()
			e.Usage = &usage
		}
		return []Event{e}
	case "stream_event":
		return claudeStream(l)
	}
	return unknown(line)
}

// claudeStream returns the events of a stream_event line that tell of a
// provider call: its start (model, input and cache tokens, time to first
// token), its output tokens and stop reason, its end. Text and tool use
// come whole on the assistant lines.
func claudeStream(l claudeLine) []Event {
	ev := l.Event
	if ev == nil {
		return nil
	}
	e := Event{SessionID: l.SessionID, ParentToolUseID: l.ParentToolUseID, MessageID: l.APIMessageID}
	switch ev.Type {
	case "message_start":
		if ev.Message == nil {
			return nil
		}
		e.Kind, e.Model, e.DurationMS = KindCallStart, ev.Message.Model, l.TTFTMS
		e.MessageID = cmp.Or(ev.Message.ID, e.MessageID)
		if u := ev.Message.Usage; u != nil {
			usage := u.usage()
			usage.OutputTokens = 0
			e.Usage = &usage
		}
	case "message_delta":
		e.Kind = KindCallUsage
		if ev.Usage != nil {
			e.Usage = &instrument.Usage{OutputTokens: ev.Usage.OutputTokens}
		}
		if ev.Delta != nil {
			e.Content = ev.Delta.StopReason
		}
	case "message_stop":
		e.Kind = KindCallEnd
	default:
		return nil
	}
	if e.MessageID == "" {
		return nil
	}
	return []Event{e}
}

func claudeBlocks(l claudeLine, line []byte) []Event {
	var blocks []claudeBlock
	if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
		// A user message may be a plain string: the prompt echoed back.
		var s string
		if json.Unmarshal(l.Message.Content, &s) == nil {
			return nil
		}
		return unknown(line)
	}
	if l.Message.Model == claudeSynthetic {
		// Claude Code's own message standing in for a failed request
		// ("API Error: 400 …"): the failure, not an answer.
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" && b.Text != "" {
				texts = append(texts, b.Text)
			}
		}
		return []Event{{Kind: KindError, SessionID: l.SessionID, Content: strings.Join(texts, "\n")}}
	}
	var out []Event
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if l.Type == "assistant" && b.Text != "" {
				out = append(out, Event{Kind: KindResponse, SessionID: l.SessionID, Model: l.Message.Model, Content: b.Text})
			}
		case "tool_use":
			out = append(out, Event{Kind: KindToolCall, SessionID: l.SessionID, Model: l.Message.Model,
				ToolName: b.Name, CallID: b.ID, Content: compact(b.Input)})
		case "tool_result":
			kind := KindToolResult
			if b.IsError {
				kind = KindToolResultError
			}
			out = append(out, Event{Kind: kind, SessionID: l.SessionID, CallID: b.ToolUseID, Content: claudeResultText(b.Content)})
		}
	}
	return out
}

// claudeResultText is a tool result's content: a string, or the text of its
// text blocks, or its JSON.
func claudeResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		if len(texts) == len(blocks) {
			return strings.Join(texts, "\n")
		}
	}
	return compact(raw)
}

// claudeSynthetic is the model Claude Code names on the messages it makes
// up itself, such as the text of an API error.
const claudeSynthetic = "<synthetic>"

// taskTools are the names under which Claude Code starts a sub-agent.
var taskTools = map[string]bool{"Task": true, "Agent": true}

// subagentName is the name of the sub-agent a Task tool use starts: its
// subagent_type, else its description; "" for any other tool use.
func subagentName(e Event) string {
	if !taskTools[e.ToolName] {
		return ""
	}
	var in struct {
		SubagentType string `json:"subagent_type"`
		Description  string `json:"description"`
	}
	if json.Unmarshal([]byte(e.Content), &in) != nil {
		return ""
	}
	if in.SubagentType != "" {
		return in.SubagentType
	}
	return in.Description
}
