package collector

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// Conversion from OTLP is pure: receivers decode a request, these functions
// turn it into the shapes mapping reads. Every string is repaired to valid
// UTF-8 on the way, so nothing downstream sees invalid text.

// Attributes naming the instrumentation scope of an OTLP span, as the
// OpenTelemetry Collector's exporters name them.
const (
	keyScopeName    = "otel.scope.name"
	keyScopeVersion = "otel.scope.version"
)

// spansFromOTLP converts the spans of an OTLP trace request.
func spansFromOTLP(rss []*tracepb.ResourceSpans) []mapping.Span {
	n := 0
	for _, rs := range rss {
		for _, ss := range rs.GetScopeSpans() {
			n += len(ss.GetSpans())
		}
	}
	spans := make([]mapping.Span, 0, n)
	for _, rs := range rss {
		res := resourceAttrs(rs.GetResource())
		for _, ss := range rs.GetScopeSpans() {
			scope := ss.GetScope()
			for _, ps := range ss.GetSpans() {
				s := spanFromOTLP(ps)
				s.Resource = res
				s.Origin = otlpSpanRef{rs, ss, ps}
				if name := validUTF8(scope.GetName()); name != "" {
					s.Attrs.List = append(s.Attrs.List, schema.Attr{Key: keyScopeName, Value: name})
					if v := validUTF8(scope.GetVersion()); v != "" {
						s.Attrs.List = append(s.Attrs.List, schema.Attr{Key: keyScopeVersion, Value: v})
					}
				}
				spans = append(spans, s)
			}
		}
	}
	return spans
}

// validSpans returns the spans of a request that can be stored, in their
// order and in spans' backing array, refusing invalid ids and times
// (docs/design/otlp.md). Copies of one span fold into the most complete:
// ended over running, else the later in the request.
func validSpans(spans []mapping.Span) ([]mapping.Span, Result) {
	type id struct{ trace, span string }
	var res Result
	var badIDs, badTimes int64
	var timeErr error
	at := make(map[id]int, len(spans))
	kept := spans[:0]
	for _, s := range spans {
		if s.TraceID == "" || s.SpanID == "" {
			badIDs++
			continue
		}
		if err := spanTimes(&s); err != nil {
			badTimes++
			timeErr = cmp.Or(timeErr, err)
			continue
		}
		k := id{s.TraceID, s.SpanID}
		if i, ok := at[k]; ok {
			if s.Ended || !kept[i].Ended {
				kept[i] = s
			}
			continue
		}
		at[k] = len(kept)
		kept = append(kept, s)
	}
	var why []string
	if badIDs > 0 {
		why = append(why, fmt.Sprintf("%d spans refused: a trace id must be 16 bytes and a span id 8 bytes, not all zero", badIDs))
	}
	if badTimes > 0 {
		why = append(why, fmt.Sprintf("%d spans refused for their times, such as: %v", badTimes, timeErr))
	}
	res.Rejected, res.Message = badIDs+badTimes, strings.Join(why, "; ")
	return kept, res
}

// spanTimes checks the times of s: its start, its end once it ended, and
// its events'.
func spanTimes(s *mapping.Span) error {
	if err := schema.CheckTime("span "+s.SpanID+" start_time_unix_nano", s.StartNS); err != nil {
		return err
	}
	if s.Ended {
		if err := schema.CheckTime("span "+s.SpanID+" end_time_unix_nano", s.EndNS); err != nil {
			return err
		}
	}
	for _, e := range s.Events {
		if err := schema.CheckTime("span "+s.SpanID+" event time_unix_nano", e.TimeNS); err != nil {
			return err
		}
	}
	return nil
}

func spanFromOTLP(ps *tracepb.Span) mapping.Span {
	s := mapping.Span{
		TraceID:      hexID(ps.GetTraceId(), 16),
		SpanID:       hexID(ps.GetSpanId(), 8),
		ParentSpanID: hexID(ps.GetParentSpanId(), 8),
		Name:         validUTF8(ps.GetName()),
		Kind:         spanKind(ps.GetKind()),
		StartNS:      ps.GetStartTimeUnixNano(),
		EndNS:        ps.GetEndTimeUnixNano(),
		Ended:        ps.GetEndTimeUnixNano() != 0,
		Attrs:        attrsFromOTLP(ps.GetAttributes()),
	}
	if st := ps.GetStatus(); st.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		s.Failed = true
		s.StatusMsg = validUTF8(st.GetMessage())
	}
	if evs := ps.GetEvents(); len(evs) > 0 {
		s.Events = make([]mapping.Event, 0, len(evs))
		for _, e := range evs {
			s.Events = append(s.Events, mapping.Event{Name: validUTF8(e.GetName()), TimeNS: e.GetTimeUnixNano(), Attrs: attrsFromOTLP(e.GetAttributes())})
		}
	}
	return s
}

// spanKind names a span kind as the Go SDK's trace.SpanKind.String does.
func spanKind(k tracepb.Span_SpanKind) string {
	switch k {
	case tracepb.Span_SPAN_KIND_INTERNAL:
		return "internal"
	case tracepb.Span_SPAN_KIND_SERVER:
		return "server"
	case tracepb.Span_SPAN_KIND_CLIENT:
		return "client"
	case tracepb.Span_SPAN_KIND_PRODUCER:
		return "producer"
	case tracepb.Span_SPAN_KIND_CONSUMER:
		return "consumer"
	}
	return "unspecified"
}

// logsFromOTLP converts the log records of an OTLP logs request, in
// request order.
func logsFromOTLP(rls []*logspb.ResourceLogs) []mapping.LogRecord {
	var logs []mapping.LogRecord
	for _, rl := range rls {
		res := resourceAttrs(rl.GetResource())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				l := mapping.LogRecord{
					Pos:       uint32(len(logs)),
					TraceID:   hexID(lr.GetTraceId(), 16),
					SpanID:    hexID(lr.GetSpanId(), 8),
					TimeNS:    lr.GetTimeUnixNano(),
					EventName: validUTF8(lr.GetEventName()),
					Attrs:     attrsFromOTLP(lr.GetAttributes()),
					Resource:  res,
					Origin:    otlpLogRef{rl, sl, lr},
				}
				if l.TimeNS == 0 {
					l.TimeNS = lr.GetObservedTimeUnixNano()
				}
				if l.EventName == "" {
					l.EventName = l.Attrs.Str(schema.KeyEventName)
				}
				if b := lr.GetBody(); b != nil {
					l.Body = anyValueString(b)
				}
				if name, _ := mapping.AgentEvent(l); name != "" {
					l.EventName = name
				}
				logs = append(logs, l)
			}
		}
	}
	return logs
}

func resourceAttrs(r *resourcepb.Resource) mapping.Attrs {
	return attrsFromOTLP(r.GetAttributes())
}

// attrsFromOTLP converts OTLP attributes, keeping their order and, should
// a key repeat, every copy (lookups take the first).
func attrsFromOTLP(kvs []*commonpb.KeyValue) mapping.Attrs {
	if len(kvs) == 0 {
		return mapping.Attrs{}
	}
	list := make([]schema.Attr, 0, len(kvs))
	for _, kv := range kvs {
		list = append(list, schema.Attr{Key: validUTF8(kv.GetKey()), Value: anyValueString(kv.GetValue())})
	}
	return mapping.Attrs{List: list}
}

// anyValueString renders an attribute value as the attribute columns store
// it: strings as they are, numbers and booleans formatted, bytes in base64,
// arrays and maps as JSON.
func anyValueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return validUTF8(x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BytesValue:
		return base64.StdEncoding.EncodeToString(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue, *commonpb.AnyValue_KvlistValue:
		var b bytes.Buffer
		writeAnyJSON(&b, v)
		return b.String()
	}
	return ""
}

// writeAnyJSON writes v as JSON, keeping the order of map keys.
func writeAnyJSON(b *bytes.Buffer, v *commonpb.AnyValue) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		b.Write(genai.Marshal(validUTF8(x.StringValue)))
	case *commonpb.AnyValue_BoolValue:
		b.WriteString(strconv.FormatBool(x.BoolValue))
	case *commonpb.AnyValue_IntValue:
		b.WriteString(strconv.FormatInt(x.IntValue, 10))
	case *commonpb.AnyValue_DoubleValue:
		if f := x.DoubleValue; math.IsNaN(f) || math.IsInf(f, 0) {
			b.Write(genai.Marshal(strconv.FormatFloat(f, 'g', -1, 64)))
		} else {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case *commonpb.AnyValue_BytesValue:
		b.Write(genai.Marshal(base64.StdEncoding.EncodeToString(x.BytesValue)))
	case *commonpb.AnyValue_ArrayValue:
		b.WriteByte('[')
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeAnyJSON(b, e)
		}
		b.WriteByte(']')
	case *commonpb.AnyValue_KvlistValue:
		b.WriteByte('{')
		for i, kv := range x.KvlistValue.GetValues() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(genai.Marshal(validUTF8(kv.GetKey())))
			b.WriteByte(':')
			writeAnyJSON(b, kv.GetValue())
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// hexID renders a trace or span id of n bytes as lowercase hex; an id of
// another length or all zeros is invalid and yields "".
func hexID(id []byte, n int) string {
	if len(id) != n {
		return ""
	}
	for _, c := range id {
		if c != 0 {
			return hex.EncodeToString(id)
		}
	}
	return ""
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
