package collector

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
)

func otlpStr(v string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
}
func otlpKV(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOTLPAnyValueString(t *testing.T) {
	tests := []struct {
		name string
		in   *commonpb.AnyValue
		want string
	}{
		{"nil", nil, ""},
		{"empty", &commonpb.AnyValue{}, ""},
		{"string", otlpStr("héllo"), "héllo"},
		{"bool", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}, "true"},
		{"int", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -42}}, "-42"},
		{"double", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.25}}, "0.25"},
		{"bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0xde, 0xad}}}, "3q0="},
		{"array", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
			otlpStr("stop"), {Value: &commonpb.AnyValue_IntValue{IntValue: 1}}, {},
		}}}}, `["stop",1,null]`},
		{"kvlist keeps key order and nests", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
			otlpKV("role", otlpStr("user")),
			otlpKV("z", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 1.5}}),
			otlpKV("a", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
				otlpKV("html", otlpStr("<b>&</b>")),
			}}}}),
		}}}}, `{"role":"user","z":1.5,"a":{"html":"<b>&</b>"}}`},
		{"invalid UTF-8 repaired", otlpStr("caf\xe9"), "caf\uFFFD"},
		{"invalid UTF-8 repaired inside JSON", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{otlpStr("\xff")}}}}, `["` + "\uFFFD" + `"]`},
	}
	for _, tt := range tests {
		if got := anyValueString(tt.in); got != tt.want {
			t.Errorf("%s: anyValueString(%v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestOTLPSpans(t *testing.T) {
	traceID := mustHex(t, "5b8efff798038103d269b633813fc60c")
	rss := []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{otlpKV("service.name", otlpStr("svc\xff"))}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "opentelemetry.instrumentation.openai_v2", Version: "2.1b0"},
			Spans: []*tracepb.Span{{
				TraceId: traceID, SpanId: mustHex(t, "EEE19B7EC3C1B174"), ParentSpanId: make([]byte, 8),
				Name: "chat \xffgpt", Kind: tracepb.Span_SPAN_KIND_CLIENT,
				StartTimeUnixNano: 100, EndTimeUnixNano: 350,
				Attributes: []*commonpb.KeyValue{
					otlpKV("gen_ai.usage.input_tokens", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}),
					otlpKV("bad\xc3key", otlpStr("v\xc3")),
				},
				Events: []*tracepb.Span_Event{{TimeUnixNano: 200, Name: "exception\xff", Attributes: []*commonpb.KeyValue{otlpKV("exception.message", otlpStr("boom"))}}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "overloaded\xe9"},
			}, {
				TraceId: traceID[:15], SpanId: []byte{1, 2, 3}, Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: 5, Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK, Message: "ignored"},
			}},
		}},
	}}
	got := spansFromOTLP(rss)
	for i := range got {
		if f, _ := got[i].Origin.(otlpSpanRef); f.rs != rss[0] || f.ss != rss[0].ScopeSpans[0] || f.ps != rss[0].ScopeSpans[0].Spans[i] {
			t.Errorf("span %d comes from %+v, not its place in the request", i, f)
		}
		got[i].Origin = nil
	}
	want := []mapping.Span{{
		TraceID: "5b8efff798038103d269b633813fc60c", SpanID: "eee19b7ec3c1b174", ParentSpanID: "",
		Name: "chat \uFFFDgpt", Kind: "client", StartNS: 100, EndNS: 350, Ended: true,
		Failed: true, StatusMsg: "overloaded\uFFFD",
		Attrs: mapping.Attrs{List: []schema.Attr{
			{Key: "gen_ai.usage.input_tokens", Value: "7"},
			{Key: "bad\uFFFDkey", Value: "v\uFFFD"},
			{Key: keyScopeName, Value: "opentelemetry.instrumentation.openai_v2"},
			{Key: keyScopeVersion, Value: "2.1b0"},
		}},
		Resource: mapping.Attrs{List: []schema.Attr{{Key: "service.name", Value: "svc\uFFFD"}}},
		Events:   []mapping.Event{{Name: "exception\uFFFD", TimeNS: 200, Attrs: mapping.Attrs{List: []schema.Attr{{Key: "exception.message", Value: "boom"}}}}},
	}, {
		TraceID: "", SpanID: "", Kind: "server", StartNS: 5, Ended: false,
		Attrs: mapping.Attrs{List: []schema.Attr{
			{Key: keyScopeName, Value: "opentelemetry.instrumentation.openai_v2"},
			{Key: keyScopeVersion, Value: "2.1b0"},
		}},
		Resource: mapping.Attrs{List: []schema.Attr{{Key: "service.name", Value: "svc\uFFFD"}}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spansFromOTLP:\n got %+v\nwant %+v", got, want)
	}
	if row, _ := mapping.SpanRow(got[0]); row.Kind != "client" || row.Status != schema.StatusError || row.StatusMsg != "overloaded\uFFFD" || row.Project != "svc\uFFFD" {
		t.Errorf("mapSpan of an OTLP span = %+v", row)
	}

	kinds := map[tracepb.Span_SpanKind]string{
		tracepb.Span_SPAN_KIND_UNSPECIFIED: "unspecified", tracepb.Span_SPAN_KIND_INTERNAL: "internal",
		tracepb.Span_SPAN_KIND_SERVER: "server", tracepb.Span_SPAN_KIND_CLIENT: "client",
		tracepb.Span_SPAN_KIND_PRODUCER: "producer", tracepb.Span_SPAN_KIND_CONSUMER: "consumer",
	}
	for k, want := range kinds {
		if got := spanKind(k); got != want {
			t.Errorf("spanKind(%v) = %q, want %q", k, got, want)
		}
	}
}

func TestOTLPLogs(t *testing.T) {
	rls := []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{otlpKV("service.name", otlpStr("svc"))}},
		ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{
			TimeUnixNano: 10, ObservedTimeUnixNano: 20,
			TraceId: mustHex(t, "5b8efff798038103d269b633813fc60c"), SpanId: mustHex(t, "eee19b7ec3c1b174"),
			EventName:  "gen_ai.choice",
			Attributes: []*commonpb.KeyValue{otlpKV("event.name", otlpStr("ignored: the field wins"))},
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
				otlpKV("index", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 0}}),
				otlpKV("message", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{otlpKV("content", otlpStr("hi\xff"))}}}}),
			}}}},
		}, {
			ObservedTimeUnixNano: 30, TraceId: make([]byte, 16), SpanId: mustHex(t, "eee19b7ec3c1b174"),
			Attributes: []*commonpb.KeyValue{otlpKV("event.name", otlpStr("gen_ai.user.message"))},
			Body:       otlpStr("plain\xe9"),
		}, {
			TimeUnixNano: 40,
		}}}},
	}}
	got := logsFromOTLP(rls)
	for i := range got {
		if f, _ := got[i].Origin.(otlpLogRef); f.rl != rls[0] || f.sl != rls[0].ScopeLogs[0] || f.lr != rls[0].ScopeLogs[0].LogRecords[i] {
			t.Errorf("log record %d comes from %+v, not its place in the request", i, f)
		}
		got[i].Origin = nil
	}
	res := mapping.Attrs{List: []schema.Attr{{Key: "service.name", Value: "svc"}}}
	want := []mapping.LogRecord{{
		TraceID: "5b8efff798038103d269b633813fc60c", SpanID: "eee19b7ec3c1b174", TimeNS: 10, EventName: "gen_ai.choice",
		Body:  `{"index":0,"message":{"content":"hi` + "\uFFFD" + `"}}`,
		Attrs: mapping.Attrs{List: []schema.Attr{{Key: "event.name", Value: "ignored: the field wins"}}}, Resource: res,
	}, {
		TraceID: "", SpanID: "eee19b7ec3c1b174", Pos: 1, TimeNS: 30, EventName: "gen_ai.user.message", Body: "plain\uFFFD",
		Attrs: mapping.Attrs{List: []schema.Attr{{Key: "event.name", Value: "gen_ai.user.message"}}}, Resource: res,
	}, {
		Pos: 2, TimeNS: 40, Resource: res,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logsFromOTLP:\n got %+v\nwant %+v", got, want)
	}
}

func TestValidSpans(t *testing.T) {
	const tid, tid2 = "5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"
	const at = uint64(1_767_225_600_000_000_000) // 2026-01-01
	sp := func(trace, id, name string, ended bool) mapping.Span {
		return mapping.Span{TraceID: trace, SpanID: id, Name: name, Ended: ended, StartNS: at, EndNS: at + 1}
	}
	timed := func(name string, start, end, event uint64) mapping.Span {
		s := sp(tid, "2222222222222222", name, end != 0)
		s.StartNS, s.EndNS, s.Events = start, end, []mapping.Event{{Name: "e", TimeNS: event}}
		return s
	}
	show := func(spans []mapping.Span) string {
		var b strings.Builder
		for _, s := range spans {
			fmt.Fprintf(&b, "[%s/%s %s ended=%v]", s.TraceID, s.SpanID, s.Name, s.Ended)
		}
		return b.String()
	}
	tests := []struct {
		name     string
		in, want []mapping.Span
		rejected int64
	}{
		{"valid spans kept in order",
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "a", true), sp(tid, "1111111111111111", "b", false)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "a", true), sp(tid, "1111111111111111", "b", false)}, 0},
		// hexID renders an all-zero or wrong-length id as "".
		{"invalid ids refused beside a valid span",
			[]mapping.Span{sp("", "00f067aa0ba902b7", "no trace", true), sp(tid, "00f067aa0ba902b7", "ok", true), sp(tid, "", "no span", true)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "ok", true)}, 2},
		{"ended copy replaces a running one",
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "running", false), sp(tid, "1111111111111111", "other", true), sp(tid, "00f067aa0ba902b7", "ended", true)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "ended", true), sp(tid, "1111111111111111", "other", true)}, 0},
		{"running copy does not replace an ended one",
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "ended", true), sp(tid, "00f067aa0ba902b7", "running", false)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "ended", true)}, 0},
		{"of two ended copies the later wins",
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "first", true), sp(tid, "00f067aa0ba902b7", "second", true), sp(tid, "00f067aa0ba902b7", "third", false)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "second", true)}, 0},
		{"same span id in another trace is another span",
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "a", true), sp(tid2, "00f067aa0ba902b7", "b", true)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "a", true), sp(tid2, "00f067aa0ba902b7", "b", true)}, 0},
		// schema.CheckTime: what convtrace stores, it can export and import.
		{"times outside 2000..2106 refused beside a valid span",
			[]mapping.Span{timed("start 0", 0, 0, at), timed("start 1970", 5e9, 6e9, at), timed("end 2200", at, 7_258_118_400_000_000_000, at),
				timed("event 1970", at, at+1, 1), sp(tid, "00f067aa0ba902b7", "ok", true), timed("running", at, 0, at+5)},
			[]mapping.Span{sp(tid, "00f067aa0ba902b7", "ok", true), timed("running", at, 0, at+5)}, 4},
		{"the bounds themselves are kept",
			[]mapping.Span{timed("first", schema.MinTimeNS, schema.MaxTimeNS, schema.MinTimeNS)},
			[]mapping.Span{timed("first", schema.MinTimeNS, schema.MaxTimeNS, schema.MinTimeNS)}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		in := show(tt.in)
		got, res := validSpans(tt.in)
		if show(got) != show(tt.want) || res.Rejected != tt.rejected || (res.Rejected > 0) != (res.Message != "") {
			t.Errorf("%s: validSpans(%s) = %s, %+v; want %s, %d rejected with a reason", tt.name, in, show(got), res, show(tt.want), tt.rejected)
		}
	}
}
