package collector

import (
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/schema"
)

// span is a finished or running span in the shape mapping reads, whatever it
// came from (the Go SDK in-process, or OTLP).
type span struct {
	traceID, spanID, parentSpanID string
	name, kind                    string
	startNS, endNS                uint64
	ended                         bool
	failed                        bool
	statusMsg                     string
	attrs                         attrs
	resource                      attrs
	events                        []event
	from                          otlpSpanRef // where an OTLP span came from, to stage it as it came
	// duplicate marks a span of a call another span of the batch maps
	// (foldCalls): it keeps its spans row only.
	duplicate bool
}

type event struct {
	name   string
	timeNS uint64
	attrs  attrs
}

// attrs keeps attributes in arrival order with their values as strings,
// as the Nested attribute columns store them. Lookups scan: spans carry tens
// of attributes, where a scan beats building a map for every span.
type attrs struct {
	list []schema.Attr
}

// get returns the value of the first key present.
func (a attrs) get(keys ...string) (string, bool) {
	for _, k := range keys {
		for _, kv := range a.list {
			if kv.Key == k {
				return kv.Value, true
			}
		}
	}
	return "", false
}

func (a attrs) str(keys ...string) string {
	v, _ := a.get(keys...)
	return v
}

// uint32 returns the first key present as a count: nil when none is, and
// nil with invalid set when its value is no integer in [0, 2^32) (negative,
// fractional, NaN or overflowing): stored as unknown, never as a wrapped
// or clamped number.
func (a attrs) uint32(keys ...string) (n *uint32, invalid bool) {
	v, ok := a.get(keys...)
	if !ok {
		return nil, false
	}
	u, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return nil, true
	}
	return u32p(uint32(u)), false
}

// cost returns the first key present as an amount of money: nil when none
// is, and nil with invalid set when its value is negative, NaN, infinite or
// no number, which would poison every sum it enters.
func (a attrs) cost(keys ...string) (usd *float64, invalid bool) {
	v, ok := a.get(keys...)
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !schema.ValidCost(f) {
		return nil, true
	}
	return &f, false
}

func (a attrs) bool(key string) bool {
	v, _ := a.get(key)
	b, _ := strconv.ParseBool(v)
	return b
}

// attrsFromKV converts SDK attributes, whose keys the SDK keeps unique.
func attrsFromKV(kvs []attribute.KeyValue) attrs {
	list := make([]schema.Attr, len(kvs))
	for i, kv := range kvs {
		list[i] = schema.Attr{Key: string(kv.Key), Value: kv.Value.String()}
	}
	return attrs{list: list}
}

// fromSDK reads a span of the Go SDK, finished or still running.
func fromSDK(ro sdktrace.ReadOnlySpan) span {
	sc := ro.SpanContext()
	s := span{
		traceID:   sc.TraceID().String(),
		spanID:    sc.SpanID().String(),
		name:      ro.Name(),
		kind:      ro.SpanKind().String(),
		startNS:   unixNano(ro.StartTime().UnixNano()),
		ended:     !ro.EndTime().IsZero(),
		failed:    ro.Status().Code == codes.Error,
		statusMsg: ro.Status().Description,
		attrs:     attrsFromKV(ro.Attributes()),
	}
	if s.ended {
		s.endNS = unixNano(ro.EndTime().UnixNano())
	}
	if p := ro.Parent(); p.IsValid() {
		s.parentSpanID = p.SpanID().String()
	}
	if r := ro.Resource(); r != nil {
		s.resource = attrsFromKV(r.Attributes())
	}
	for _, e := range ro.Events() {
		s.events = append(s.events, event{name: e.Name, timeNS: unixNano(e.Time.UnixNano()), attrs: attrsFromKV(e.Attributes)})
	}
	return s
}

func unixNano(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}
