package collector_test

import (
	"context"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
)

// An OTLP sender marks a call internal with the bool attribute
// convtrace.internal, as instrument does in-process: its turns are stored
// with internal = 1, and the attribute is not repeated on them; other
// calls, and a false value, stay 0.
func TestIngesterMapsInternal(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	flag := func(v bool) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: "convtrace.internal", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
	}
	now := time.Now()
	req := traceRequest(
		chatSpan("b000000000000001", now, "kept for the audit", flag(true)),
		chatSpan("b000000000000002", now, "said to the user", flag(false)),
		chatSpan("b000000000000003", now, "said to the user"),
	)
	if _, err := in.Traces(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := testkit.Strings(t, conn, "SELECT concat(span_id, ':', role, ':', toString(internal), ':', toString(has(attributes.key, 'convtrace.internal'))) FROM conversations ORDER BY span_id, seq")
	want := []string{
		"b000000000000001:prompt:1:0", "b000000000000001:response:1:0",
		"b000000000000002:prompt:0:0", "b000000000000002:response:0:0",
		"b000000000000003:prompt:0:0", "b000000000000003:response:0:0",
	}
	if len(got) != len(want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
}
