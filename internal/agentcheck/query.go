package agentcheck

import (
	"encoding/hex"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// LogEvent is a flattened OTLP log record.
type LogEvent struct {
	// Name is the record's "event.name" attribute (Claude Code:
	// "user_prompt"; Codex: "codex.user_prompt").
	Name     string
	Body     string
	Scope    string
	TraceID  string // hex, "" when unset
	SpanID   string // hex, "" when unset
	Attrs    map[string]any
	Resource map[string]any
}

// Span is a flattened OTLP span.
type Span struct {
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string
	Scope        string
	StartNano    uint64
	EndNano      uint64
	Attrs        map[string]any
	Events       []SpanEvent
	Resource     map[string]any
}

// SpanEvent is one event of a Span.
type SpanEvent struct {
	Name  string
	Attrs map[string]any
}

// MetricPoint is one number or histogram data point.
type MetricPoint struct {
	Metric string
	Unit   string
	// Value is the point's value; for a histogram its sum.
	Value float64
	// Count is a histogram's count; 0 otherwise.
	Count  uint64
	Attrs  map[string]any
	Scope  string
	Delta  bool
	IsHist bool
}

// AnyValue converts an OTLP AnyValue to string, int64, float64, bool,
// []byte, []any or map[string]any.
func AnyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, AnyValue(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return Attrs(x.KvlistValue.GetValues())
	}
	return nil
}

// Attrs converts OTLP key-values to a map.
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = AnyValue(kv.GetValue())
	}
	return m
}

func hexID(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return hex.EncodeToString(b)
}

// LogEvents flattens an export request's log records, in order.
func LogEvents(req *collogspb.ExportLogsServiceRequest) []LogEvent {
	var out []LogEvent
	for _, rl := range req.GetResourceLogs() {
		res := Attrs(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				a := Attrs(lr.GetAttributes())
				name, _ := a["event.name"].(string)
				body, _ := AnyValue(lr.GetBody()).(string)
				out = append(out, LogEvent{
					Name: name, Body: body, Scope: sl.GetScope().GetName(),
					TraceID: hexID(lr.GetTraceId()), SpanID: hexID(lr.GetSpanId()),
					Attrs: a, Resource: res,
				})
			}
		}
	}
	return out
}

// Spans flattens an export request's spans, in order.
func Spans(req *coltracepb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		res := Attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name: s.GetName(), TraceID: hexID(s.GetTraceId()), SpanID: hexID(s.GetSpanId()),
					ParentSpanID: hexID(s.GetParentSpanId()), Scope: ss.GetScope().GetName(),
					StartNano: s.GetStartTimeUnixNano(), EndNano: s.GetEndTimeUnixNano(),
					Attrs: Attrs(s.GetAttributes()), Resource: res,
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, SpanEvent{Name: e.GetName(), Attrs: Attrs(e.GetAttributes())})
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

// MetricPoints flattens an export request's sum, gauge and histogram
// points, in order.
func MetricPoints(req *colmetricspb.ExportMetricsServiceRequest) []MetricPoint {
	var out []MetricPoint
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				base := MetricPoint{Metric: m.GetName(), Unit: m.GetUnit(), Scope: sm.GetScope().GetName()}
				if s := m.GetSum(); s != nil {
					base.Delta = s.GetAggregationTemporality() == 1
					for _, dp := range s.GetDataPoints() {
						p := base
						p.Value = dp.GetAsDouble() + float64(dp.GetAsInt())
						p.Attrs = Attrs(dp.GetAttributes())
						out = append(out, p)
					}
				}
				if g := m.GetGauge(); g != nil {
					for _, dp := range g.GetDataPoints() {
						p := base
						p.Value = dp.GetAsDouble() + float64(dp.GetAsInt())
						p.Attrs = Attrs(dp.GetAttributes())
						out = append(out, p)
					}
				}
				if h := m.GetHistogram(); h != nil {
					base.Delta = h.GetAggregationTemporality() == 1
					base.IsHist = true
					for _, dp := range h.GetDataPoints() {
						p := base
						p.Value = dp.GetSum()
						p.Count = dp.GetCount()
						p.Attrs = Attrs(dp.GetAttributes())
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}
