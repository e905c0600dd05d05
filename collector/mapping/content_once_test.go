package mapping

import (
	"slices"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// TestSpanRowContentOnce: a spans row leaves out the content attributes
// its span's turns hold, and says so; it keeps the rest, and keeps
// everything of a span that maps to no turns or whose turns do not hold
// that content.
func TestSpanRowContentOnce(t *testing.T) {
	const (
		in     = `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`
		out    = `[{"role":"assistant","parts":[{"type":"text","content":"Rainy."}],"finish_reason":"stop"}]`
		marker = schema.KeyContentInTurns + "=" + schema.ContentInTurns
	)
	genAI := []string{"gen_ai.operation.name=chat", "gen_ai.provider.name=openai", "gen_ai.request.model=gpt-4o",
		"gen_ai.usage.input_tokens=42", "gen_ai.response.finish_reasons=[\"stop\"]", "app.user=ada"}
	tests := []struct {
		name     string
		attrs    []string // key=value
		failed   bool
		running  bool
		wantKeep []string // the row's attributes, in order
	}{
		{"GenAI call: its content goes", append(slices.Clone(genAI),
			"gen_ai.system_instructions=Be brief.", "gen_ai.input.messages="+in, "gen_ai.output.messages="+out),
			false, false, append(slices.Clone(genAI), marker)},
		{"GenAI call that failed: its answer is in no turn", append(slices.Clone(genAI),
			"gen_ai.input.messages="+in, "gen_ai.output.messages="+out),
			true, false, append(slices.Clone(genAI), "gen_ai.output.messages="+out, marker)},
		{"GenAI call still running: its prompt only", append(slices.Clone(genAI), "gen_ai.input.messages="+in),
			false, true, append(slices.Clone(genAI), marker)},
		{"GenAI call without content: nothing to leave out", genAI, false, false, genAI},
		{"agent span: no turns", []string{"gen_ai.operation.name=invoke_agent", "gen_ai.input.messages=" + in},
			false, false, []string{"gen_ai.operation.name=invoke_agent", "gen_ai.input.messages=" + in}},
		{"Vercel wrapper: no turns", []string{"ai.operationId=ai.generateText", "ai.prompt={\"prompt\":\"Hi\"}", "ai.response.text=Hello"},
			false, false, []string{"ai.operationId=ai.generateText", "ai.prompt={\"prompt\":\"Hi\"}", "ai.response.text=Hello"}},
		{"plain span: no turns", []string{"http.method=GET", "input.value=x"}, false, false, []string{"http.method=GET", "input.value=x"}},
		{"two conventions: the one mapped goes", append(slices.Clone(genAI), "gen_ai.input.messages="+in,
			"gen_ai.prompt.0.role=user", "gen_ai.prompt.0.content=Something else"),
			false, false, append(slices.Clone(genAI), "gen_ai.prompt.0.role=user", "gen_ai.prompt.0.content=Something else", marker)},
		{"OpenLLMetry: messages go, finish reasons stay", []string{"gen_ai.system=Anthropic", "gen_ai.request.model=claude",
			"gen_ai.prompt.0.role=user", "gen_ai.prompt.0.content=Hi", "gen_ai.completion.0.role=assistant",
			"gen_ai.completion.0.content=Hello", "gen_ai.completion.0.finish_reason=stop",
			"gen_ai.completion.0.tool_calls.0.name=search", "gen_ai.completion.0.tool_calls.0.arguments={\"q\":\"x\"}"},
			false, false, []string{"gen_ai.system=Anthropic", "gen_ai.request.model=claude", "gen_ai.completion.0.finish_reason=stop", marker}},
		{"OpenInference messages: the raw input.value not read stays", []string{"openinference.span.kind=LLM", "llm.model_name=gpt-4o",
			"input.value={\"messages\":[],\"temperature\":0}", "input.mime_type=application/json",
			"llm.input_messages.0.message.role=user", "llm.input_messages.0.message.content=Hi",
			"llm.output_messages.0.message.role=assistant", "llm.output_messages.0.message.content=Hello"},
			false, false, []string{"openinference.span.kind=LLM", "llm.model_name=gpt-4o",
				"input.value={\"messages\":[],\"temperature\":0}", "input.mime_type=application/json", marker}},
		{"OpenInference values only", []string{"openinference.span.kind=LLM", "input.value=Hi", "output.value=Hello"},
			false, false, []string{"openinference.span.kind=LLM", marker}},
		{"Vercel call", []string{"ai.operationId=ai.generateText.doGenerate", "ai.model.id=gpt-4o", "ai.prompt.format=messages",
			"ai.prompt.messages=[{\"role\":\"user\",\"content\":\"Hi\"}]", "ai.response.text=Hello",
			"ai.response.toolCalls=[{\"toolCallId\":\"c1\",\"toolName\":\"search\",\"args\":\"{}\"}]"},
			false, false, []string{"ai.operationId=ai.generateText.doGenerate", "ai.model.id=gpt-4o", "ai.prompt.format=messages", marker}},
		{"GenAI tool", []string{"gen_ai.operation.name=execute_tool", "gen_ai.tool.name=search", "gen_ai.tool.call.id=c1",
			"gen_ai.tool.call.arguments={\"q\":\"x\"}", "gen_ai.tool.call.result=found"},
			false, false, []string{"gen_ai.operation.name=execute_tool", "gen_ai.tool.name=search", "gen_ai.tool.call.id=c1", marker}},
		{"failed tool: its result is its answer", []string{"gen_ai.operation.name=execute_tool", "gen_ai.tool.call.result=no such file"},
			true, false, []string{"gen_ai.operation.name=execute_tool", marker}},
		{"Vercel tool, alternatives alike: both go", []string{"ai.operationId=ai.toolCall", "ai.toolCall.name=search",
			"ai.toolCall.args={}", "ai.toolCall.input={}", "ai.toolCall.result=ok"},
			false, false, []string{"ai.operationId=ai.toolCall", "ai.toolCall.name=search", marker}},
		{"Vercel tool, alternatives apart: the one read goes", []string{"ai.operationId=ai.toolCall",
			"ai.toolCall.args={\"a\":1}", "ai.toolCall.input={\"b\":2}", "ai.toolCall.result=ok"},
			false, false, []string{"ai.operationId=ai.toolCall", "ai.toolCall.input={\"b\":2}", marker}},
		{"OpenLLMetry workflow: no turns", []string{"traceloop.span.kind=workflow", "traceloop.entity.input=x", "traceloop.entity.output=y"},
			false, false, []string{"traceloop.span.kind=workflow", "traceloop.entity.input=x", "traceloop.entity.output=y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Span{TraceID: "t1", SpanID: "s1", StartNS: 1, EndNS: 2, Ended: !tt.running, Failed: tt.failed}
			for _, a := range tt.attrs {
				k, v, _ := strings.Cut(a, "=")
				s.Attrs.List = append(s.Attrs.List, schema.Attr{Key: k, Value: v})
			}
			row, _ := SpanRow(s)
			var got []string
			for _, a := range row.Attributes {
				got = append(got, a.Key+"="+a.Value)
			}
			if !slices.Equal(got, tt.wantKeep) {
				t.Errorf("span %q\nrow attributes %q\nwant           %q", tt.attrs, got, tt.wantKeep)
			}
			if slices.Contains(got, marker) && len(Turns(s)) == 0 {
				t.Errorf("row marked %s, but the span maps to no turns", marker)
			}
		})
	}
}
