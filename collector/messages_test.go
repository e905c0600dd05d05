package collector

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

func TestMapMessagesNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "OTel shape: arguments as a JSON string become JSON, result kept, unknown parts kept",
			in: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":"{\"b\": 1, \"a\": [true]}"}]},
			      {"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":{"ok":true}}]},
			      {"role":"user","parts":[{"type":"blob","modality":"image","mime_type":"image/png","content":"iVBO"}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":{"a":[true],"b":1}}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":{"ok":true}}]},` +
				`{"role":"user","parts":[{"content":"iVBO","mime_type":"image/png","modality":"image","type":"blob"}]}]`,
		},
		{
			name: "chat-completions shape: content parts, tool calls, tool result",
			in: `[{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},
			      {"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"g","arguments":"not json"}}]},
			      {"role":"tool","tool_call_id":"c2","content":"done <ok> & fine"}]`,
			want: `[{"role":"user","parts":[{"type":"text","content":"Look:"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}]},` +
				`{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"g","arguments":"not json"}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"c2","response":"done <ok> & fine"}]}]`,
		},
		{
			name: "Anthropic shape: thinking, tool_use, tool_result",
			in: `[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","id":"toolu_1","name":"ls","input":{"dir":"."}}]},
			      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.go"}]}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"reasoning","content":"hmm"},{"type":"tool_call","id":"toolu_1","name":"ls","arguments":{"dir":"."}}]},` +
				`{"role":"user","parts":[{"type":"tool_call_response","id":"toolu_1","response":"a.go"}]}]`,
		},
		{
			name: "large numbers keep their digits",
			in:   `[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"id":9007199254740993}}]}]`,
			want: `[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"id":9007199254740993}}]}]`,
		},
	}
	for _, tt := range tests {
		ms, ok := parseMessages(tt.in)
		if !ok {
			t.Errorf("%s: parseMessages(%s) failed", tt.name, tt.in)
			continue
		}
		if got := renderMessages(ms); got != tt.want {
			t.Errorf("%s: normalized\n  %s\n got %s\nwant %s", tt.name, tt.in, got, tt.want)
		}
	}
	if _, ok := parseMessages("plain text"); ok {
		t.Error("parseMessages accepted text that is no JSON array")
	}
}

func TestMapResponseContent(t *testing.T) {
	text := func(role string, ss ...string) message {
		m := message{Role: role}
		for _, s := range ss {
			m.Parts = append(m.Parts, textPart(s))
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
		{"one text message", exchange{output: []message{text("assistant", "Hi")}}, "Hi"},
		{"text blocks join by line", exchange{output: []message{text("assistant", "a", "b")}}, "a\nb"},
		{"two choices stay messages", exchange{output: []message{text("assistant", "a"), text("assistant", "b")}},
			`[{"role":"assistant","parts":[{"type":"text","content":"a"}]},{"role":"assistant","parts":[{"type":"text","content":"b"}]}]`},
		{"empty message", exchange{output: []message{{Role: "assistant"}}}, ""},
	}
	for _, tt := range tests {
		if got := tt.x.response(); got != tt.want {
			t.Errorf("%s: response() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMapConventionEdges(t *testing.T) {
	ol := span{
		traceID: "t", spanID: "s", ended: true, startNS: 1, endNS: 2,
		attrs: mkAttrs(
			schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-3.5-turbo-instruct", olRequestType, "completion",
			"gen_ai.prompt.0.user", "Once upon", "gen_ai.completion.0.content", " a time",
			"gen_ai.completion.1.function_call.name", "f", "gen_ai.completion.1.function_call.arguments", `{"x":1}`,
			"llm.request.functions.0.name", "f", "traceloop.workflow.name", "story", olPromptTokens, "3", olTotalTokens, "2",
		),
	}
	turns := mapTurns(ol)
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
	running := span{spanID: "r", attrs: mkAttrs(schema.KeyOperationName, "chat", schema.KeyProviderName, "openai",
		schema.KeyInputMessages, `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`)}
	if turns := mapTurns(running); len(turns) != 1 || turns[0].Role != schema.RolePrompt {
		t.Errorf("running call: %+v, want its prompt only", turns)
	}

	// Another instrumentation's gen_ai.prompt event is not convtrace's.
	foreign := span{spanID: "f", ended: true, attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o"),
		events: []event{{name: schema.EventPrompt, attrs: mkAttrs(schema.KeyEventContent, `{"role":"user","content":"x"}`)}}}
	if turns := mapTurns(foreign); len(turns) != 2 || turns[0].Content != "" {
		t.Errorf("foreign gen_ai.prompt event: %+v, want a content-less call", turns)
	}

	// Agent spans and spans of no convention give no turns.
	for _, a := range []attrs{
		mkAttrs(schema.KeyOperationName, schema.OperationInvokeAgent, schema.KeyProviderName, "openai", schema.KeyInputMessages, `[]`),
		mkAttrs(oiSpanKind, "CHAIN", oiInputValue, "x", oiOutputValue, "y"),
		mkAttrs(olSpanKind, "workflow", olEntityName, "w"),
		mkAttrs("http.route", "/"),
	} {
		if turns := mapTurns(span{spanID: "x", ended: true, attrs: a}); turns != nil {
			t.Errorf("span %+v mapped to turns %+v", a, turns)
		}
	}
}
