package otlpwire

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Field numbers of the OTLP trace protos used to build raw payloads.
const (
	fieldResourceSpans = 1 // ExportTraceServiceRequest
	fieldScopeSpans    = 2 // ResourceSpans
	fieldSpans         = 2 // ScopeSpans
	fieldTraceID       = 1 // Span
	fieldSpanID        = 2
	fieldName          = 5
	fieldAttributes    = 9
	fieldKey           = 1 // KeyValue
	fieldValue         = 2
	fieldStringValue   = 1 // AnyValue
	fieldKvlistValue   = 6
	fieldValues        = 1 // KeyValueList
)

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func keyValue(key, value []byte) []byte {
	any := bytesField(nil, fieldStringValue, value)
	return bytesField(bytesField(nil, fieldKey, key), fieldValue, any)
}

// rawTraceRequest builds, without the Go decoder's checks, a request with
// one span named name whose attributes hold attr twice: directly and inside
// a kvlist, and an unknown field 99.
func rawTraceRequest(traceID, name, key, value []byte) []byte {
	nested := bytesField(nil, fieldKvlistValue, bytesField(nil, fieldValues, keyValue(key, value)))
	span := bytesField(nil, fieldTraceID, traceID)
	span = bytesField(span, fieldSpanID, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	span = bytesField(span, fieldName, name)
	span = bytesField(span, fieldAttributes, keyValue(key, value))
	span = bytesField(span, fieldAttributes, bytesField(bytesField(nil, fieldKey, []byte("nested")), fieldValue, nested))
	span = protowire.AppendTag(span, 99, protowire.VarintType)
	span = protowire.AppendVarint(span, 7)
	scope := bytesField(nil, fieldSpans, span)
	rs := bytesField(nil, fieldScopeSpans, scope)
	return bytesField(nil, fieldResourceSpans, rs)
}

func TestDecodeProtoRepairsInvalidUTF8(t *testing.T) {
	traceID := []byte{0xff, 0xfe, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xc3} // bytes: must stay as sent
	body := rawTraceRequest(traceID, []byte("chat \xff\xfe"), []byte("gen_ai.prompt\xc3"), []byte("caf\xc3\x28 ok"))
	if err := proto.Unmarshal(body, new(coltracepb.ExportTraceServiceRequest)); err == nil {
		t.Fatal("proto.Unmarshal accepted invalid UTF-8; the payload does not exercise the repair")
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := DecodeProto(body, &req); err != nil {
		t.Fatalf("DecodeProto: %v", err)
	}
	span := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	nested := span.GetAttributes()[1].GetValue().GetKvlistValue().GetValues()[0]
	for _, c := range []struct{ field, got, want string }{
		{"name", span.GetName(), "chat \uFFFD"},
		{"attribute key", span.GetAttributes()[0].GetKey(), "gen_ai.prompt\uFFFD"},
		{"attribute value", span.GetAttributes()[0].GetValue().GetStringValue(), "caf\uFFFD( ok"},
		{"nested key", nested.GetKey(), "gen_ai.prompt\uFFFD"},
		{"nested value", nested.GetValue().GetStringValue(), "caf\uFFFD( ok"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if !bytes.Equal(span.GetTraceId(), traceID) {
		t.Errorf("trace id = %x, want %x (bytes fields are not strings)", span.GetTraceId(), traceID)
	}
	if got := span.ProtoReflect().GetUnknown(); len(got) == 0 {
		t.Error("unknown field 99 was dropped")
	}
}

func TestDecodeProtoValid(t *testing.T) {
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		Name:       "ok",
		Attributes: []*commonpb.KeyValue{{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}}}},
	}}}}}}}
	body, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := DecodeProto(body, &got); err != nil {
		t.Fatalf("DecodeProto: %v", err)
	}
	if !proto.Equal(&got, want) {
		t.Errorf("DecodeProto = %v, want %v", &got, want)
	}
}

func TestDecodeProtoErrors(t *testing.T) {
	valid := rawTraceRequest(make([]byte, 16), []byte("ok"), []byte("k"), []byte("v"))
	invalid := rawTraceRequest(make([]byte, 16), []byte("bad \xff"), []byte("k"), []byte("v"))
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"truncated", valid[:len(valid)-3]},
		{"truncated with invalid UTF-8", invalid[:len(invalid)-3]},
		{"garbage", []byte("this is not protobuf")},
		{"field number 0", []byte{0x00, 0x01}},
	} {
		var req coltracepb.ExportTraceServiceRequest
		err := DecodeProto(c.body, &req)
		if err == nil {
			t.Errorf("%s: DecodeProto(%x) = nil, want an error", c.name, c.body)
			continue
		}
		if !strings.HasPrefix(err.Error(), "invalid protobuf ExportTraceServiceRequest: ") {
			t.Errorf("%s: error %q does not name the message", c.name, err)
		}
	}
}
