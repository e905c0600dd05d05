package mapping

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// claudeCalls reads a Claude Code prompt's records: each api_request (or
// api_error) is a call; its request and answer come from the raw bodies
// when they were logged (OTEL_LOG_RAW_API_BODIES), else from the prompt,
// the tool runs and the answer text the other records give.
func claudeCalls(events []Event) ([]agentCall, []agentTool) {
	var (
		prompt     string
		bodies     = map[string]string{} // request_body_id → request body
		bodyOf     = map[string]string{} // request_id → request_body_id
		responses  = map[string]string{} // request_id → response body
		answers    = map[string]string{} // request_id → answer text
		tools      []agentTool
		toolAt     = map[string]int{}
		calls      []agentCall
		conv       []genai.Message // the prompt's conversation so far, without bodies
		promptTime uint64
	)
	for _, e := range events {
		a := e.Attrs
		switch e.Name {
		case ccUserPrompt:
			prompt, promptTime = a.Str("prompt", "prompt_text"), e.TimeNS
		case ccRequestBody:
			bodies[a.Str(ccBodyID)] = a.Str("body")
		case ccResponseBody:
			bodyOf[a.Str(ccRequestID)] = a.Str(ccBodyID)
			responses[a.Str(ccRequestID)] = a.Str("body")
		case ccAssistantAnswer:
			answers[a.Str(ccRequestID)] = a.Str("response")
		case ccToolDecision, ccToolResult, ccToolOutput:
			id := a.Str("tool_use_id")
			i, ok := toolAt[id]
			if !ok {
				i = len(tools)
				toolAt[id] = i
				tools = append(tools, agentTool{id: id, callID: id})
			}
			t := &tools[i]
			switch e.Name {
			case ccToolDecision:
				t.attrs = append(t.attrs, schema.Attr{Key: "claude_code.decision", Value: a.Str("decision")},
					schema.Attr{Key: "claude_code.decision.source", Value: a.Str("source")})
				t.name, t.requestID = cmp.Or(t.name, a.Str("tool_name")), cmp.Or(t.requestID, a.Str(ccRequestID))
				t.arguments = cmp.Or(t.arguments, a.Str("tool_parameters"))
			case ccToolOutput:
				t.result = a.Str("output")
			default:
				// The result's record alone keys the tool's turns.
				t.traceID, t.parentID = idsOf(e)
				t.name, t.requestID = a.Str("tool_name"), a.Str(ccRequestID)
				t.arguments = cmp.Or(a.Str("tool_input", "tool_parameters"), t.arguments)
				t.hasResult, t.endNS = true, e.TimeNS
				t.startNS = startOf(e.TimeNS, a)
				t.failed = a.Str("success") == "false"
			}
		case ccAPIRequest, ccAPIError:
			trace, parent := idsOf(e)
			c := agentCall{id: a.Str(ccRequestID), traceID: trace, parentID: parent, endNS: e.TimeNS,
				model: a.Str("model"), provider: "anthropic", requestID: a.Str(ccRequestID), ttftMS: a.Str("ttft_ms")}
			if c.id == "" {
				c.id = a.Str(ccPromptID) + "/" + strconv.Itoa(len(calls))
			}
			c.startNS = startOf(e.TimeNS, a)
			if e.Name == ccAPIError {
				c.failed, c.errMsg = true, a.Str("error", "status_code")
			}
			c.usage = claudeUsage(a)
			calls = append(calls, c)
		}
	}
	// A tool's turns come with its result and the call that asked for it,
	// after which they sort (Claude Code may log the call's end after the
	// tool began): both records key them.
	ended := map[string]uint64{}
	for _, c := range calls {
		ended[c.requestID] = c.endNS
	}
	tools = slices.DeleteFunc(tools, func(t agentTool) bool {
		_, asked := ended[t.requestID]
		return !t.hasResult || !asked
	})
	for i := range tools {
		t := &tools[i]
		t.startNS = max(t.startNS, ended[t.requestID]+1)
		t.endNS = max(t.endNS, t.startNS)
	}
	toolAt = map[string]int{}
	asked := map[string][]genai.Part{}
	for i, t := range tools {
		toolAt[t.callID] = i
		asked[t.requestID] = append(asked[t.requestID], genai.ToolCall(t.callID, t.name, t.arguments))
	}
	// The conversation the prompt's calls built, call by call.
	if prompt != "" && promptTime != 0 {
		conv = append(conv, genai.Message{Role: "user", Parts: []genai.Part{genai.Text(prompt)}})
	}
	for i := range calls {
		c := &calls[i]
		if ms, ok := anthropicRequest(bodies[bodyOf[c.requestID]]); ok {
			c.input = ms
		} else {
			c.input = slices.Clone(conv)
		}
		if ms, ok := anthropicResponse(responses[c.requestID]); ok {
			c.output = ms
		} else {
			var parts []genai.Part
			if text := answers[c.requestID]; text != "" {
				parts = append(parts, genai.Text(text))
			}
			parts = append(parts, asked[c.requestID]...)
			if len(parts) > 0 {
				c.output = []genai.Message{{Role: "assistant", Parts: parts}}
			}
		}
		conv = append(conv, c.output...)
		for _, p := range asked[c.requestID] {
			t := tools[toolAt[p.ID]]
			conv = append(conv, genai.Message{Role: "tool", Parts: []genai.Part{genai.ToolResponse(t.callID, t.result)}})
		}
	}
	return calls, tools
}

// claudeUsage is an api_request's usage: Claude Code counts input without
// the cache, as Anthropic's API does.
func claudeUsage(a Attrs) []schema.Attr {
	in, _ := a.uint32("input_tokens")
	read, _ := a.uint32("cache_read_tokens")
	write, _ := a.uint32("cache_creation_tokens")
	var out []schema.Attr
	if in != nil {
		total := schema.InputTokens(uint64(*in), count(read), count(write), true)
		out = append(out, schema.Attr{Key: schema.KeyInputTokens, Value: strconv.FormatUint(total, 10)})
	}
	for _, k := range []struct{ from, to string }{
		{"output_tokens", schema.KeyOutputTokens}, {"cache_read_tokens", schema.KeyCacheReadTokens},
		{"cache_creation_tokens", schema.KeyCacheWriteTokens}, {"cost_usd", schema.KeyCostUSD},
	} {
		if v, ok := a.Get(k.from); ok {
			out = append(out, schema.Attr{Key: k.to, Value: v})
		}
	}
	return out
}

// anthropicRequest reads a logged Messages API request body: its system
// prompt and messages.
func anthropicRequest(body string) ([]genai.Message, bool) {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
	}
	if body == "" || json.Unmarshal([]byte(body), &req) != nil {
		return nil, false
	}
	ms, ok := genai.Parse(string(req.Messages))
	if !ok {
		return nil, false
	}
	if len(req.System) > 0 && string(req.System) != "null" {
		system := genai.PartsFromJSON(req.System)
		if len(system) > 0 {
			ms = append([]genai.Message{{Role: "system", Parts: system}}, ms...)
		}
	}
	return ms, true
}

// anthropicResponse reads a logged Messages API response body.
func anthropicResponse(body string) ([]genai.Message, bool) {
	var resp struct {
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	}
	if body == "" || json.Unmarshal([]byte(body), &resp) != nil || len(resp.Content) == 0 {
		return nil, false
	}
	m := genai.Message{Role: "assistant", Parts: genai.PartsFromJSON(resp.Content), FinishReason: resp.StopReason}
	return []genai.Message{m}, true
}

// ClaudeToolOutput returns, for a Claude Code tool span, the record that
// carries its tool.output event (the one place Claude Code sends a tool's
// output) as a record of its prompt, so that it joins the tool's result.
func ClaudeToolOutput(s Span) (attrs []schema.Attr, timeNS uint64, ok bool) {
	if _, byRun := s.Resource.Get(schema.KeyRecordedBy); byRun || s.Attrs.Str(keyScopeName) != ccTracingScope {
		return nil, 0, false
	}
	for _, e := range s.Events {
		if e.Name != "tool.output" {
			continue
		}
		return []schema.Attr{
			{Key: schema.KeyEventName, Value: strings.TrimPrefix(ccToolOutput, ccPrefix)},
			{Key: ccSession, Value: s.Attrs.Str(ccSession)},
			{Key: "tool_use_id", Value: s.Attrs.Str("tool_use_id", schema.KeyToolCallID)},
			{Key: "output", Value: e.Attrs.Str("output")},
		}, e.TimeNS, true
	}
	return nil, 0, false
}

// ClaudeToolOutputBody is the body of the record ClaudeToolOutput makes.
const ClaudeToolOutputBody = ccToolOutput
