package otlpwire

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/internal/testkit"
)

func TestDecodeProtoRepairsInvalidUTF8(t *testing.T) {
	traceID := []byte{0xff, 0xfe, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xc3} // bytes: must stay as sent
	body := testkit.RawTraceRequest(traceID, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte("chat \xff\xfe"), []byte("gen_ai.prompt\xc3"), []byte("caf\xc3\x28 ok"))
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
	valid := testkit.RawTraceRequest(make([]byte, 16), make([]byte, 8), []byte("ok"), []byte("k"), []byte("v"))
	invalid := testkit.RawTraceRequest(make([]byte, 16), make([]byte, 8), []byte("bad \xff"), []byte("k"), []byte("v"))
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
