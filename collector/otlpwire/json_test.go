package otlpwire

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// traceJSON follows the example request of the OTLP specification
// (opentelemetry-proto examples/trace.json), plus what other senders do:
// an int64 as a number, an unknown field, a link.
const traceJSON = `{
  "resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "my.service"}}]},
    "schemaUrl": "https://opentelemetry.io/schemas/1.26.0",
    "futureField": {"ignored": true},
    "scopeSpans": [{
      "scope": {"name": "my.library", "version": "1.0.0"},
      "spans": [{
        "traceId": "5B8EFFF798038103D269B633813FC60C",
        "spanId": "EEE19B7EC3C1B174",
        "parentSpanId": "EEE19B7EC3C1B173",
        "name": "I'm a server span",
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": 1544712661000000000,
        "kind": 2,
        "attributes": [
          {"key": "my.span.attr", "value": {"stringValue": "some value \"traceId\": \"00\""}},
          {"key": "count", "value": {"intValue": "42"}}
        ],
        "links": [{"traceId": "0102030405060708090a0b0c0d0e0f10", "spanId": "0102030405060708"}],
        "status": {"code": 1}
      }]
    }]
  }]
}`

func TestDecodeJSONTraces(t *testing.T) {
	var req coltracepb.ExportTraceServiceRequest
	if err := DecodeJSON([]byte(traceJSON), &req); err != nil {
		t.Fatalf("DecodeJSON: %v", err)
	}
	span := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	for _, c := range []struct {
		field     string
		got, want string
	}{
		{"traceId", hex.EncodeToString(span.GetTraceId()), "5b8efff798038103d269b633813fc60c"},
		{"spanId", hex.EncodeToString(span.GetSpanId()), "eee19b7ec3c1b174"},
		{"parentSpanId", hex.EncodeToString(span.GetParentSpanId()), "eee19b7ec3c1b173"},
		{"link traceId", hex.EncodeToString(span.GetLinks()[0].GetTraceId()), "0102030405060708090a0b0c0d0e0f10"},
		{"link spanId", hex.EncodeToString(span.GetLinks()[0].GetSpanId()), "0102030405060708"},
		{"name", span.GetName(), "I'm a server span"},
		{"kind", span.GetKind().String(), tracepb.Span_SPAN_KIND_SERVER.String()},
		{"string attribute (holding id-like text)", span.GetAttributes()[0].GetValue().GetStringValue(), `some value "traceId": "00"`},
		{"service.name", req.GetResourceSpans()[0].GetResource().GetAttributes()[0].GetValue().GetStringValue(), "my.service"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if got := span.GetAttributes()[1].GetValue().GetIntValue(); got != 42 {
		t.Errorf("intValue given as a string = %d, want 42", got)
	}
	if got := span.GetStartTimeUnixNano(); got != 1544712660000000000 {
		t.Errorf("startTimeUnixNano given as a string = %d", got)
	}
	if got := span.GetEndTimeUnixNano(); got != 1544712661000000000 {
		t.Errorf("endTimeUnixNano given as a number = %d", got)
	}
}

func TestDecodeJSONLogs(t *testing.T) {
	const body = `{"resource_logs":[{"scope_logs":[{"log_records":[{
		"time_unix_nano":"1700000000000000000","severity_number":9,"event_name":"gen_ai.user.message",
		"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174",
		"body":{"stringValue":"hello ` + "\xff" + ` world"}}]}]}]}`
	var req collogspb.ExportLogsServiceRequest
	if err := DecodeJSON([]byte(body), &req); err != nil {
		t.Fatalf("DecodeJSON of snake_case keys and invalid UTF-8: %v", err)
	}
	rec := req.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()[0]
	if got := hex.EncodeToString(rec.GetTraceId()); got != "5b8efff798038103d269b633813fc60c" {
		t.Errorf("trace_id = %s", got)
	}
	if got := hex.EncodeToString(rec.GetSpanId()); got != "eee19b7ec3c1b174" {
		t.Errorf("span_id = %s", got)
	}
	if got, want := rec.GetBody().GetStringValue(), "hello \uFFFD world"; got != want {
		t.Errorf("body = %q, want %q (invalid byte replaced)", got, want)
	}
	if got := rec.GetSeverityNumber(); got != 9 {
		t.Errorf("severity_number = %d, want 9", got)
	}
	if got := rec.GetEventName(); got != "gen_ai.user.message" {
		t.Errorf("event_name = %q", got)
	}
}

func TestDecodeJSONBase64IDs(t *testing.T) {
	// What protojson itself writes: base64 ids. Not OTLP/JSON, but harmless
	// to accept.
	const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"W47/95gDgQPSabYzgT/GDA==","spanId":"7uGbfsPBsXQ="}]}]}]}`
	var req coltracepb.ExportTraceServiceRequest
	if err := DecodeJSON([]byte(body), &req); err != nil {
		t.Fatalf("DecodeJSON: %v", err)
	}
	span := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	if got := hex.EncodeToString(span.GetTraceId()); got != "5b8efff798038103d269b633813fc60c" {
		t.Errorf("traceId = %s", got)
	}
	if got := hex.EncodeToString(span.GetSpanId()); got != "eee19b7ec3c1b174" {
		t.Errorf("spanId = %s", got)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"not JSON", `{"resourceSpans": [`, "ExportTraceServiceRequest"},
		{"trailing garbage", `{} {}`, "ExportTraceServiceRequest"},
		{"id neither hex nor base64", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"not-an-id!"}]}]}]}`, "traceId"},
		{"wrong type", `{"resourceSpans":{"a":1}}`, "unexpected token"},
	} {
		var req coltracepb.ExportTraceServiceRequest
		err := DecodeJSON([]byte(c.body), &req)
		if err == nil {
			t.Errorf("%s: DecodeJSON(%s) = nil, want an error", c.name, c.body)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "invalid OTLP/JSON") {
			t.Errorf("%s: DecodeJSON(%s) = %q, want it to start with %q and name %q", c.name, c.body, msg, "invalid OTLP/JSON", c.want)
		}
	}
}

func TestHexIDsToBase64(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"traceId":"00ff"}`, `{"traceId":"AP8="}`},
		{`{"spanId" : "00ff", "x": "00ff"}`, `{"spanId" : "AP8=", "x": "00ff"}`},
		{`{"parent_span_id":"00FF"}`, `{"parent_span_id":"AP8="}`},
		{`{"traceId":""}`, `{"traceId":""}`},
		{`{"traceId":"0ff"}`, `{"traceId":"0ff"}`},                                                   // odd length: left for protojson
		{`{"traceId":"AP8="}`, `{"traceId":"AP8="}`},                                                 // base64 kept
		{`{"k":"\"traceId\":\"00ff\""}`, `{"k":"\"traceId\":\"00ff\""}`},                             // inside a string
		{`["traceId", "00ff"]`, `["traceId", "00ff"]`},                                               // not a key
		{`{"traceId":"00ff", "spanId": "unterminated`, `{"traceId":"AP8=", "spanId": "unterminated`}, // left for protojson
	} {
		if got := string(hexIDsToBase64([]byte(c.in))); got != c.want {
			t.Errorf("hexIDsToBase64(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestHexIDsToBase64NoIDsNoCopy(t *testing.T) {
	in := []byte(`{"resourceSpans":[]}`)
	if got := hexIDsToBase64(in); &got[0] != &in[0] || !bytes.Equal(got, in) {
		t.Errorf("a body without ids was copied or changed: %s", got)
	}
}
