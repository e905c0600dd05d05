package mapping

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

func TestMapResponseContent(t *testing.T) {
	text := func(role string, ss ...string) genai.Message {
		m := genai.Message{Role: role}
		for _, s := range ss {
			m.Parts = append(m.Parts, genai.Text(s))
		}
		return m
	}
	tests := []struct {
		name string
		x    exchange
		want string
	}{
		{"no output", exchange{}, ""},
		{"plain value", exchange{outputText: "4"}, "4"},
		{"one text message", exchange{output: []genai.Message{text("assistant", "Hi")}}, "Hi"},
		{"text blocks join by line", exchange{output: []genai.Message{text("assistant", "a", "b")}}, "a\nb"},
		{"two choices stay messages", exchange{output: []genai.Message{text("assistant", "a"), text("assistant", "b")}},
			`[{"role":"assistant","parts":[{"type":"text","content":"a"}]},{"role":"assistant","parts":[{"type":"text","content":"b"}]}]`},
		{"empty message", exchange{output: []genai.Message{{Role: "assistant"}}}, ""},
	}
	for _, tt := range tests {
		if got := tt.x.response(); got != tt.want {
			t.Errorf("%s: response() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMapConventionEdges(t *testing.T) {
	ol := Span{
		TraceID: "t", SpanID: "s", Ended: true, StartNS: 1, EndNS: 2,
		Attrs: mkAttrs(
			schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-3.5-turbo-instruct", olRequestType, "completion",
			"gen_ai.prompt.0.user", "Once upon", "gen_ai.completion.0.content", " a time",
			"gen_ai.completion.1.function_call.name", "f", "gen_ai.completion.1.function_call.arguments", `{"x":1}`,
			"llm.request.functions.0.name", "f", "traceloop.workflow.name", "story", olPromptTokens, "3", olTotalTokens, "2",
		),
	}
	turns := Turns(ol)
	if len(turns) != 2 {
		t.Fatalf("OpenLLMetry completion: got %d turns, want 2", len(turns))
	}
	if got, want := turns[0].Content, `[{"role":"user","parts":[{"type":"text","content":"Once upon"}]}]`; got != want {
		t.Errorf("completions prompt = %s, want %s", got, want)
	}
	if got, want := turns[1].Content, `[{"role":"assistant","parts":[{"type":"text","content":" a time"}]},{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"x":1}}]}]`; got != want {
		t.Errorf("two choices = %s, want %s", got, want)
	}
	if turns[1].Operation != schema.OperationTextCompletion || turns[1].ToolName != "f" || turns[1].TokensOut != nil {
		t.Errorf("response %+v: want operation text_completion, tool f, no output tokens from a total below the input", turns[1])
	}
	var kept []string
	for _, a := range turns[1].Attributes {
		kept = append(kept, a.Key)
	}
	if got, want := strings.Join(kept, ","), "llm.request.functions.0.name,traceloop.workflow.name"; got != want {
		t.Errorf("attributes kept on the turn: %s, want %s (the rest is consumed)", got, want)
	}

	// A call still running shows its prompt only.
	running := Span{SpanID: "r", Attrs: mkAttrs(schema.KeyOperationName, "chat", schema.KeyProviderName, "openai",
		schema.KeyInputMessages, `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`)}
	if turns := Turns(running); len(turns) != 1 || turns[0].Role != schema.RolePrompt {
		t.Errorf("running call: %+v, want its prompt only", turns)
	}

	// Another instrumentation's gen_ai.prompt event is not convtrace's.
	foreign := Span{SpanID: "f", Ended: true, Attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o"),
		Events: []Event{{Name: schema.EventPrompt, Attrs: mkAttrs(schema.KeyEventContent, `{"role":"user","content":"x"}`)}}}
	if turns := Turns(foreign); len(turns) != 2 || turns[0].Content != "" {
		t.Errorf("foreign gen_ai.prompt event: %+v, want a content-less call", turns)
	}

	// Agent spans and spans of no convention give no turns.
	for _, a := range []Attrs{
		mkAttrs(schema.KeyOperationName, schema.OperationInvokeAgent, schema.KeyProviderName, "openai", schema.KeyInputMessages, `[]`),
		mkAttrs(oiSpanKind, "CHAIN", oiInputValue, "x", oiOutputValue, "y"),
		mkAttrs(olSpanKind, "workflow", olEntityName, "w"),
		mkAttrs("http.route", "/"),
	} {
		if turns := Turns(Span{SpanID: "x", Ended: true, Attrs: a}); turns != nil {
			t.Errorf("span %+v mapped to turns %+v", a, turns)
		}
	}
}
