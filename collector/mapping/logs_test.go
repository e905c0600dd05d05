package mapping

import (
	"reflect"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// mkAttrs builds attributes from key, value pairs.
func mkAttrs(kv ...string) Attrs {
	var a Attrs
	for i := 0; i+1 < len(kv); i += 2 {
		a.List = append(a.List, schema.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return a
}

func TestLogsAttach(t *testing.T) {
	s := Span{Events: []Event{
		{Name: "first", TimeNS: 10},
		{Name: "last", TimeNS: 50},
	}}
	s.AttachLogs([]LogRecord{
		{EventName: schema.EventChoice, TimeNS: 40, Body: `{"index":0}`, Attrs: mkAttrs("gen_ai.system", "openai")},
		{EventName: schema.EventUserMessage, TimeNS: 10, Attrs: mkAttrs("gen_ai.system", "openai")}, // no body: no content attribute
	})
	want := []Event{
		{Name: "first", TimeNS: 10},
		{Name: schema.EventUserMessage, TimeNS: 10, Attrs: mkAttrs("gen_ai.system", "openai")},
		{Name: schema.EventChoice, TimeNS: 40, Attrs: mkAttrs("gen_ai.system", "openai", schema.KeyEventContent, `{"index":0}`)},
		{Name: "last", TimeNS: 50},
	}
	if !reflect.DeepEqual(s.Events, want) {
		t.Errorf("attachLogs: events\n got %+v\nwant %+v", s.Events, want)
	}

	// The log's own attributes are not changed by attaching.
	l := LogRecord{EventName: "e", Body: "b", Attrs: Attrs{List: make([]schema.Attr, 1, 4)}}
	var s2 Span
	s2.AttachLogs([]LogRecord{l})
	if len(l.Attrs.List) != 1 || len(s2.Events[0].Attrs.List) != 2 {
		t.Errorf("attachLogs changed the record's attributes: %+v", l.Attrs.List)
	}
}

func TestLogsNeeded(t *testing.T) {
	call := []string{schema.KeyOperationName, "chat", schema.KeyProviderName, "openai", schema.KeyRequestModel, "gpt-4o"}
	with := func(kv ...string) Attrs { return mkAttrs(append(append([]string{}, call...), kv...)...) }
	tests := []struct {
		name string
		s    Span
		want bool
	}{
		{"GenAI chat without content", Span{Attrs: with()}, true},
		{"text completion with the older gen_ai.system", Span{Attrs: mkAttrs(schema.KeyOperationName, "text_completion", schema.KeySystem, "openai")}, true},
		{"embeddings", Span{Attrs: mkAttrs(schema.KeyOperationName, "embeddings", schema.KeyRequestModel, "text-embedding-3-small")}, true},
		{"before operation names: system and model", Span{Attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4")}, true},
		{"OpenLLMetry in event mode (no prompt attributes)", Span{Attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o", olRequestType, "chat")}, true},
		{"content as attributes", Span{Attrs: with(schema.KeyInputMessages, `[]`)}, false},
		{"only system instructions", Span{Attrs: with(schema.KeySystemInstructions, `[{"type":"text","content":"x"}]`)}, false},
		{"message events", Span{Attrs: with(), Events: []Event{{Name: schema.EventUserMessage}}}, false},
		{"details event", Span{Attrs: with(), Events: []Event{{Name: schema.EventInferenceDetails}}}, false},
		{"convtrace prompt event", Span{Attrs: with(), Events: []Event{{Name: schema.EventPrompt, Attrs: mkAttrs(schema.KeyContentBytes, "3")}}}, false},
		{"OpenLLMetry content", Span{Attrs: with("gen_ai.prompt.0.content", "hi")}, false},
		{"OpenInference content", Span{Attrs: with(oiSpanKind, "LLM", oiInputValue, "hi")}, false},
		{"tool execution", Span{Attrs: mkAttrs(schema.KeyOperationName, "execute_tool", schema.KeyToolName, "read_file", schema.KeyProviderName, "openai")}, false},
		{"agent", Span{Attrs: mkAttrs(schema.KeyOperationName, "invoke_agent", schema.KeyProviderName, "openai")}, false},
		{"operation alone", Span{Attrs: mkAttrs(schema.KeyOperationName, "chat")}, false},
		{"OpenInference LLM span", Span{Attrs: mkAttrs(oiSpanKind, "LLM", oiModel, "gpt-4o")}, false},
		{"plain span", Span{Attrs: mkAttrs("http.route", "/")}, false},
	}
	for _, tt := range tests {
		if got := NeedsLogs(tt.s); got != tt.want {
			t.Errorf("%s: needsLogs(%+v) = %v, want %v", tt.name, tt.s, got, tt.want)
		}
	}
}

func TestLogsSpanFrom(t *testing.T) {
	res := mkAttrs(schema.KeyServiceName, "svc")
	logs := []LogRecord{{
		TraceID: "t1", SpanID: "s1", TimeNS: 200, EventName: schema.EventChoice, Resource: res,
		Body:  `{"index":0,"finish_reason":"stop","message":{"content":"Pong."}}`,
		Attrs: mkAttrs(schema.KeySystem, "openai"),
	}, {
		TraceID: "t1", SpanID: "s1", TimeNS: 100, EventName: schema.EventUserMessage, Resource: res,
		Body:  `{"content":"Ping?"}`,
		Attrs: mkAttrs(schema.KeySystem, "ignored: first wins", schema.KeyEventName, schema.EventUserMessage, schema.KeyRequestModel, "gpt-4o"),
	}}
	s := SpanFromLogs(logs)
	if s.TraceID != "t1" || s.SpanID != "s1" || !s.Ended || s.Failed || s.StartNS != 100 || s.EndNS != 200 || s.Name != "gpt-4o" {
		t.Errorf("spanFromLogs = %+v", s)
	}
	if want := mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o"); !reflect.DeepEqual(s.Attrs, want) {
		t.Errorf("attributes %+v, want %+v (first record wins, event.name left out)", s.Attrs, want)
	}
	if len(s.Events) != 2 || s.Events[0].Name != schema.EventUserMessage || s.Events[1].Name != schema.EventChoice {
		t.Errorf("events not the records in time order: %+v", s.Events)
	}
	turns := Turns(s)
	var got []brief
	for _, turn := range turns {
		got = append(got, briefOf(turn))
	}
	want := []brief{
		{Role: "prompt", Content: `[{"role":"user","parts":[{"type":"text","content":"Ping?"}]}]`, ContentBytes: 61, Status: "ok",
			Provider: "openai", Model: "gpt-4o", ThreadID: "t1", Project: "svc"},
		{Role: "response", Seq: 1, Content: "Pong.", ContentBytes: 5, Status: "ok", Provider: "openai", Model: "gpt-4o", ThreadID: "t1", Project: "svc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns of the logs alone:\n got %+v\nwant %+v", got, want)
	}
	if s := SpanFromLogs(nil); s.SpanID != "" || s.Ended {
		t.Errorf("spanFromLogs(nil) = %+v, want the zero span", s)
	}
}

// TestStreamedPiecesOneAnswer: an answer sent as one gen_ai.choice record
// or event per streamed chunk, message or delta, text and tool call
// arguments in pieces, is one answer; choices of other indexes stay
// their own.
func TestStreamedPiecesOneAnswer(t *testing.T) {
	pieces := []string{
		`{"index":0,"delta":{"role":"assistant","content":"Let me "}}`,
		`{"index":0,"delta":{"content":"check."}}`,
		`{"index":1,"message":{"content":"Other choice."},"finish_reason":"stop"}`,
		`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}`,
		`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]}}`,
		`{"index":0,"finish_reason":"tool_calls","delta":{}}`,
	}
	var logs []LogRecord
	var events []Event
	for i, p := range pieces {
		logs = append(logs, LogRecord{TraceID: "t1", SpanID: "s1", TimeNS: uint64(100 + i), EventName: schema.EventChoice, Body: p, Attrs: mkAttrs(schema.KeySystem, "openai")})
		events = append(events, Event{Name: schema.EventChoice, TimeNS: uint64(100 + i), Attrs: mkAttrs(schema.KeyEventContent, p)})
	}
	want := `[{"role":"assistant","parts":[{"type":"text","content":"Let me check."},{"type":"tool_call","id":"call_1","name":"read_file","arguments":{"path":"a.go"}}],"finish_reason":"tool_calls"},` +
		`{"role":"assistant","parts":[{"type":"text","content":"Other choice."}],"finish_reason":"stop"}]`
	for name, s := range map[string]Span{
		"log records": SpanFromLogs(logs),
		"span events": {TraceID: "t1", SpanID: "s1", Ended: true, Attrs: mkAttrs(schema.KeyOperationName, "chat", schema.KeySystem, "openai"), Events: events},
	} {
		x, ok := genAIContent(s)
		if !ok {
			t.Fatalf("%s: no content read", name)
		}
		if got := genai.Render(x.output); got != want {
			t.Errorf("%s: answer\n got %s\nwant %s", name, got, want)
		}
	}
}
