package collector

import (
	"reflect"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// mkAttrs builds attributes from key, value pairs.
func mkAttrs(kv ...string) attrs {
	var a attrs
	for i := 0; i+1 < len(kv); i += 2 {
		a.list = append(a.list, schema.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return a
}

func TestLogsAttach(t *testing.T) {
	s := span{events: []event{
		{name: "first", timeNS: 10},
		{name: "last", timeNS: 50},
	}}
	s.attachLogs([]logRecord{
		{eventName: schema.EventChoice, timeNS: 40, body: `{"index":0}`, attrs: mkAttrs("gen_ai.system", "openai")},
		{eventName: schema.EventUserMessage, timeNS: 10, attrs: mkAttrs("gen_ai.system", "openai")}, // no body: no content attribute
	})
	want := []event{
		{name: "first", timeNS: 10},
		{name: schema.EventUserMessage, timeNS: 10, attrs: mkAttrs("gen_ai.system", "openai")},
		{name: schema.EventChoice, timeNS: 40, attrs: mkAttrs("gen_ai.system", "openai", schema.KeyEventContent, `{"index":0}`)},
		{name: "last", timeNS: 50},
	}
	if !reflect.DeepEqual(s.events, want) {
		t.Errorf("attachLogs: events\n got %+v\nwant %+v", s.events, want)
	}

	// The log's own attributes are not changed by attaching.
	l := logRecord{eventName: "e", body: "b", attrs: attrs{list: make([]schema.Attr, 1, 4)}}
	var s2 span
	s2.attachLogs([]logRecord{l})
	if len(l.attrs.list) != 1 || len(s2.events[0].attrs.list) != 2 {
		t.Errorf("attachLogs changed the record's attributes: %+v", l.attrs.list)
	}
}

func TestLogsNeeded(t *testing.T) {
	call := []string{schema.KeyOperationName, "chat", schema.KeyProviderName, "openai", schema.KeyRequestModel, "gpt-4o"}
	with := func(kv ...string) attrs { return mkAttrs(append(append([]string{}, call...), kv...)...) }
	tests := []struct {
		name string
		s    span
		want bool
	}{
		{"GenAI chat without content", span{attrs: with()}, true},
		{"text completion with the older gen_ai.system", span{attrs: mkAttrs(schema.KeyOperationName, "text_completion", schema.KeySystem, "openai")}, true},
		{"embeddings", span{attrs: mkAttrs(schema.KeyOperationName, "embeddings", schema.KeyRequestModel, "text-embedding-3-small")}, true},
		{"before operation names: system and model", span{attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4")}, true},
		{"OpenLLMetry in event mode (no prompt attributes)", span{attrs: mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o", olRequestType, "chat")}, true},
		{"content as attributes", span{attrs: with(schema.KeyInputMessages, `[]`)}, false},
		{"only system instructions", span{attrs: with(schema.KeySystemInstructions, `[{"type":"text","content":"x"}]`)}, false},
		{"message events", span{attrs: with(), events: []event{{name: schema.EventUserMessage}}}, false},
		{"details event", span{attrs: with(), events: []event{{name: schema.EventInferenceDetails}}}, false},
		{"convtrace prompt event", span{attrs: with(), events: []event{{name: schema.EventPrompt, attrs: mkAttrs(schema.KeyContentBytes, "3")}}}, false},
		{"OpenLLMetry content", span{attrs: with("gen_ai.prompt.0.content", "hi")}, false},
		{"OpenInference content", span{attrs: with(oiSpanKind, "LLM", oiInputValue, "hi")}, false},
		{"tool execution", span{attrs: mkAttrs(schema.KeyOperationName, "execute_tool", schema.KeyToolName, "read_file", schema.KeyProviderName, "openai")}, false},
		{"agent", span{attrs: mkAttrs(schema.KeyOperationName, "invoke_agent", schema.KeyProviderName, "openai")}, false},
		{"operation alone", span{attrs: mkAttrs(schema.KeyOperationName, "chat")}, false},
		{"OpenInference LLM span", span{attrs: mkAttrs(oiSpanKind, "LLM", oiModel, "gpt-4o")}, false},
		{"plain span", span{attrs: mkAttrs("http.route", "/")}, false},
	}
	for _, tt := range tests {
		if got := needsLogs(tt.s); got != tt.want {
			t.Errorf("%s: needsLogs(%+v) = %v, want %v", tt.name, tt.s, got, tt.want)
		}
	}
}

func TestLogsSpanFrom(t *testing.T) {
	res := mkAttrs(schema.KeyServiceName, "svc")
	logs := []logRecord{{
		traceID: "t1", spanID: "s1", timeNS: 200, eventName: schema.EventChoice, resource: res,
		body:  `{"index":0,"finish_reason":"stop","message":{"content":"Pong."}}`,
		attrs: mkAttrs(schema.KeySystem, "openai"),
	}, {
		traceID: "t1", spanID: "s1", timeNS: 100, eventName: schema.EventUserMessage, resource: res,
		body:  `{"content":"Ping?"}`,
		attrs: mkAttrs(schema.KeySystem, "ignored: first wins", keyEventName, schema.EventUserMessage, schema.KeyRequestModel, "gpt-4o"),
	}}
	s := spanFromLogs(logs)
	if s.traceID != "t1" || s.spanID != "s1" || !s.ended || s.failed || s.startNS != 100 || s.endNS != 200 || s.name != "gpt-4o" {
		t.Errorf("spanFromLogs = %+v", s)
	}
	if want := mkAttrs(schema.KeySystem, "openai", schema.KeyRequestModel, "gpt-4o"); !reflect.DeepEqual(s.attrs, want) {
		t.Errorf("attributes %+v, want %+v (first record wins, event.name left out)", s.attrs, want)
	}
	if len(s.events) != 2 || s.events[0].name != schema.EventUserMessage || s.events[1].name != schema.EventChoice {
		t.Errorf("events not the records in time order: %+v", s.events)
	}
	turns := mapTurns(s)
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
	if s := spanFromLogs(nil); s.spanID != "" || s.ended {
		t.Errorf("spanFromLogs(nil) = %+v, want the zero span", s)
	}
}
