package mapping

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/schema"
)

// Span is a finished or running Span in the shape mapping reads, whatever it
// came from (the Go SDK in-process, or OTLP).
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name, Kind                    string
	StartNS, EndNS                uint64
	Ended                         bool
	Failed                        bool
	StatusMsg                     string
	Attrs                         Attrs
	Resource                      Attrs
	Events                        []Event
	Origin                        any // the receiver's note of where it came from; mapping never reads it
	// duplicate marks a span of a call another span of the batch maps
	// (foldCalls): it keeps its spans row only.
	duplicate bool
	// inherited is what Inherit took from the span's ancestors.
	inherited inherited
}

type Event struct {
	Name   string
	TimeNS uint64
	Attrs  Attrs
}

// Attrs keeps attributes in arrival order with their values as strings,
// as the Nested attribute columns store them. Lookups scan: spans carry tens
// of attributes, where a scan beats building a map for every span.
type Attrs struct {
	List []schema.Attr
}

// Get returns the value of the first key present.
func (a Attrs) Get(keys ...string) (string, bool) {
	for _, k := range keys {
		for _, kv := range a.List {
			if kv.Key == k {
				return kv.Value, true
			}
		}
	}
	return "", false
}

func (a Attrs) Str(keys ...string) string {
	v, _ := a.Get(keys...)
	return v
}

// uint32 returns the first key present as a count: nil when none is, and
// nil with invalid set when its value is no integer in [0, 2^32) (negative,
// fractional, NaN or overflowing): stored as unknown, never as a wrapped
// or clamped number.
func (a Attrs) uint32(keys ...string) (n *uint32, invalid bool) {
	v, ok := a.Get(keys...)
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
func (a Attrs) cost(keys ...string) (usd *float64, invalid bool) {
	v, ok := a.Get(keys...)
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !schema.ValidCost(f) {
		return nil, true
	}
	return &f, false
}

func (a Attrs) bool(key string) bool {
	v, ok := a.Get(key)
	if !ok {
		return false // no ParseBool error to allocate
	}
	b, _ := strconv.ParseBool(v)
	return b
}

// attrsFromKV converts SDK attributes, whose keys the SDK keeps unique.
func attrsFromKV(kvs []attribute.KeyValue) Attrs {
	list := make([]schema.Attr, len(kvs))
	for i, kv := range kvs {
		list[i] = schema.Attr{Key: string(kv.Key), Value: kv.Value.String()}
	}
	return Attrs{List: list}
}

// FromSDK reads a span of the Go SDK, finished or still running.
func FromSDK(ro sdktrace.ReadOnlySpan) Span {
	var r SDKReader
	return r.Span(ro)
}

// SDKReader reads spans of the Go SDK, converting the attributes of their
// resource once: a tracer provider gives every span the same resource.
// It is not safe for concurrent use.
type SDKReader struct {
	res   *resource.Resource
	attrs Attrs
}

// Span reads a span of the Go SDK, finished or still running.
func (r *SDKReader) Span(ro sdktrace.ReadOnlySpan) Span {
	sc := ro.SpanContext()
	s := Span{
		TraceID:   sc.TraceID().String(),
		SpanID:    sc.SpanID().String(),
		Name:      ro.Name(),
		Kind:      ro.SpanKind().String(),
		StartNS:   unixNano(ro.StartTime().UnixNano()),
		Ended:     !ro.EndTime().IsZero(),
		Failed:    ro.Status().Code == codes.Error,
		StatusMsg: ro.Status().Description,
		Attrs:     attrsFromKV(ro.Attributes()),
	}
	if s.Ended {
		s.EndNS = unixNano(ro.EndTime().UnixNano())
	}
	if p := ro.Parent(); p.IsValid() {
		s.ParentSpanID = p.SpanID().String()
	}
	if res := ro.Resource(); res != nil {
		if res != r.res {
			r.res, r.attrs = res, attrsFromKV(res.Attributes())
		}
		s.Resource = r.attrs
	}
	for _, e := range ro.Events() {
		s.Events = append(s.Events, Event{Name: e.Name, TimeNS: unixNano(e.Time.UnixNano()), Attrs: attrsFromKV(e.Attributes)})
	}
	return s
}

func unixNano(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// LogRecord is a log record in the shape mapping reads. GenAI
// instrumentations send message content as log records (events) linked to
// the call's span by its ids.
type LogRecord struct {
	TraceID, SpanID string // lowercase hex, "" when absent/invalid
	TimeNS          uint64 // time_unix_nano, else observed_time_unix_nano
	Pos             uint32 // the record's position in its request
	EventName       string // the log's event_name field, else its "event.name" attribute
	Body            string // the body: a string body as is, a map/array body as JSON
	Attrs           Attrs
	Resource        Attrs
	Origin          any // the receiver's note of where it came from; mapping never reads it
}

// threadAttrs returns the span's thread attributes (schema.KeyThreadAttrPrefix).
func (s Span) threadAttrs() []schema.Attr {
	var attrs []schema.Attr
	for _, a := range s.Attrs.List {
		if strings.HasPrefix(a.Key, schema.KeyThreadAttrPrefix) && a.Key != schema.KeyThreadID {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

func (s Span) durationNS() uint64 {
	if !s.Ended || s.EndNS < s.StartNS {
		return 0
	}
	return s.EndNS - s.StartNS
}

func (s Span) status() string {
	if s.Failed {
		return schema.StatusError
	}
	return schema.StatusOK
}

// errorMessage is the failure of a failed span: its status message, else
// the message of its exception event, else its error.type.
func (s Span) errorMessage() string {
	if s.StatusMsg != "" {
		return s.StatusMsg
	}
	for _, e := range s.Events {
		if e.Name == "exception" {
			if m := e.Attrs.Str("exception.message"); m != "" {
				return m
			}
		}
	}
	if t := s.Attrs.Str(schema.KeyErrorType); t != "" {
		return t
	}
	return "call failed"
}
