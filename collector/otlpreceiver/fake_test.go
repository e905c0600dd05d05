package otlpreceiver_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
)

// fakeIngester is the receiver's dependency in memory: it records what it
// is given and answers with result, or fails with err.
type fakeIngester struct {
	mu     sync.Mutex
	traces []*tracepb.ResourceSpans
	logs   []*logspb.ResourceLogs
	calls  int
	result collector.Result
	err    error
	// hold, when set, keeps every call waiting until it is closed or the
	// call's context ends (then the context's error is returned).
	hold    chan struct{}
	waiting int // calls that reached hold
}

// wait blocks on hold.
func (f *fakeIngester) wait(ctx context.Context) error {
	if f.hold == nil {
		return nil
	}
	f.mu.Lock()
	f.waiting++
	f.mu.Unlock()
	select {
	case <-f.hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeIngester) Traces(ctx context.Context, rs []*tracepb.ResourceSpans) (collector.Result, error) {
	if err := f.wait(ctx); err != nil {
		return collector.Result{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return collector.Result{}, f.err
	}
	f.traces = append(f.traces, rs...)
	return f.result, nil
}

func (f *fakeIngester) Logs(ctx context.Context, rl []*logspb.ResourceLogs) (collector.Result, error) {
	if err := f.wait(ctx); err != nil {
		return collector.Result{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return collector.Result{}, f.err
	}
	f.logs = append(f.logs, rl...)
	return f.result, nil
}

func (f *fakeIngester) waitingCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}

func (f *fakeIngester) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// storedSpan is a span as the ingester got it, flattened for comparison.
type storedSpan struct {
	service, traceID, spanID, parentID, name string
	attrs                                    map[string]string
}

func (f *fakeIngester) spans() []storedSpan {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []storedSpan
	for _, rs := range f.traces {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				out = append(out, storedSpan{
					service:  service,
					traceID:  hex.EncodeToString(s.GetTraceId()),
					spanID:   hex.EncodeToString(s.GetSpanId()),
					parentID: hex.EncodeToString(s.GetParentSpanId()),
					name:     s.GetName(),
					attrs:    attrs(s.GetAttributes()),
				})
			}
		}
	}
	return out
}

// storedLog is a log record as the ingester got it.
type storedLog struct {
	service, traceID, spanID, eventName, body string
	attrs                                     map[string]string
}

func (f *fakeIngester) logRecords() []storedLog {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []storedLog
	for _, rl := range f.logs {
		service := attrs(rl.GetResource().GetAttributes())["service.name"]
		for _, sl := range rl.GetScopeLogs() {
			for _, r := range sl.GetLogRecords() {
				out = append(out, storedLog{
					service:   service,
					traceID:   hex.EncodeToString(r.GetTraceId()),
					spanID:    hex.EncodeToString(r.GetSpanId()),
					eventName: r.GetEventName(),
					body:      anyString(r.GetBody()),
					attrs:     attrs(r.GetAttributes()),
				})
			}
		}
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = anyString(kv.GetValue())
	}
	return m
}

// anyString renders an attribute value for comparison.
func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_KvlistValue:
		var parts []string
		for _, kv := range x.KvlistValue.GetValues() {
			parts = append(parts, kv.GetKey()+"="+anyString(kv.GetValue()))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}
