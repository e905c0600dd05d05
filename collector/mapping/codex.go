package mapping

import (
	"slices"
	"strconv"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// codexCalls reads a Codex conversation's records: each api_request is a
// call, keyed by that record (its answer's turn at the time the answer
// began, when the response headers came); its usage is the completed
// response's that follows it, and the tool runs after that are what it
// asked for. Codex sends no answer text.
func codexCalls(events []Event) ([]agentCall, []agentTool) {
	var (
		calls []agentCall
		tools []agentTool
		conv  []genai.Message
		done  []uint64 // when each call's response completed
		// decisions are the tool decisions by call id.
		decisions = map[string][]schema.Attr{}
	)
	last := func() *agentCall {
		if len(calls) == 0 {
			return nil
		}
		return &calls[len(calls)-1]
	}
	for _, e := range events {
		a := e.Attrs
		switch e.Name {
		case codexUserPrompt:
			conv = append(conv, genai.Message{Role: "user", Parts: []genai.Part{genai.Text(a.Str("prompt"))}})
		case codexAPIRequest:
			trace, parent := idsOf(e)
			c := agentCall{id: a.Str(codexConversation) + "/" + strconv.FormatUint(e.TimeNS, 10),
				traceID: trace, parentID: parent, startNS: startOf(e.TimeNS, a), endNS: e.TimeNS,
				model: a.Str("model"), provider: "openai", input: slices.Clone(conv)}
			if code := a.Str("http.response.status_code"); code != "" && code[0] != '2' {
				c.failed, c.errMsg = true, "HTTP "+code
			}
			calls = append(calls, c)
			done = append(done, 0)
		case codexSSEEvent:
			if c := last(); c != nil && done[len(done)-1] == 0 {
				done[len(done)-1] = e.TimeNS
				c.usage = codexUsage(a)
				c.ttftMS = a.Str("ttft_ms")
			}
		case codexToolResult:
			id := a.Str("call_id")
			trace, parent := idsOf(e)
			t := agentTool{id: a.Str(codexConversation) + "/" + id, callID: id, name: a.Str("tool_name"),
				traceID: trace, parentID: parent, startNS: startOf(e.TimeNS, a), endNS: e.TimeNS,
				arguments: a.Str("arguments"), result: a.Str("output"), failed: a.Str("success") == "false", hasResult: true}
			tools = append(tools, t)
			if c := last(); c != nil {
				if len(c.output) == 0 {
					c.output = []genai.Message{{Role: "assistant"}}
				}
				c.output[0].Parts = append(c.output[0].Parts, genai.ToolCall(id, t.name, t.arguments))
			}
			conv = append(conv, genai.Message{Role: "assistant", Parts: []genai.Part{genai.ToolCall(id, t.name, t.arguments)}},
				genai.Message{Role: "tool", Parts: []genai.Part{genai.ToolResponse(id, t.result)}})
		case codexToolDecision:
			decisions[a.Str("call_id")] = []schema.Attr{{Key: "codex.decision", Value: a.Str("decision")},
				{Key: "codex.decision.source", Value: a.Str("source")}}
		}
	}
	// A decision rides on its tool's result, which names the same call.
	for i := range tools {
		tools[i].attrs = decisions[tools[i].callID]
	}
	for i := range calls {
		if done[i] > calls[i].startNS {
			calls[i].durationNS = done[i] - calls[i].startNS
		}
	}
	return calls, tools
}

// codexUsage is a completed response's usage: Codex counts input with the
// cache, as OpenAI's API does.
func codexUsage(a Attrs) []schema.Attr {
	var out []schema.Attr
	for _, k := range []struct{ from, to string }{
		{codexInputTokens, schema.KeyInputTokens}, {"output_token_count", schema.KeyOutputTokens},
		{"cached_token_count", schema.KeyCacheReadTokens}, {"cache_write_token_count", schema.KeyCacheWriteTokens},
		{"reasoning_token_count", schema.KeyReasoningTokens},
	} {
		if v, ok := a.Get(k.from); ok {
			out = append(out, schema.Attr{Key: k.to, Value: v})
		}
	}
	return out
}
