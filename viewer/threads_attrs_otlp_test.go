package viewer_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// taskSpan is an OTel GenAI chat span of the conversation conv-task,
// started at start, with the span attributes given as key, value pairs.
func taskSpan(spanID string, start time.Time, kv ...string) *tracepb.Span {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	attrs := []*commonpb.KeyValue{
		str("gen_ai.operation.name", "chat"), str("gen_ai.provider.name", "openai"), str("gen_ai.request.model", "gpt-4o"),
		str("gen_ai.conversation.id", "conv-task"),
		str("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"next step"}]}]`),
		str("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"done"}]}]`),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, str(kv[i], kv[i+1]))
	}
	id, _ := hex.DecodeString(spanID)
	trace, _ := hex.DecodeString("6b8efff798038103d269b633813fc60c")
	return &tracepb.Span{TraceId: trace, SpanId: id, Name: "chat gpt-4o", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(time.Second).UnixNano()), Attributes: attrs}
}

// convtrace.thread.<name> on spans sent over OTLP becomes an attribute of
// their thread, the latest value of each name winning: the list shows it,
// filters on it (task= and attr.<name>=) and finds the thread by it, and
// Store.Thread, which the thread page's header reads, carries it.
func TestThreadAttributesFromOTLP(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	rs := []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name",
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "pipeline"}}}}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
			taskSpan("1111111111111111", start, "convtrace.thread.task", "CARD-1", "convtrace.thread.board", "ops"),
			taskSpan("2222222222222222", start.Add(time.Minute), "convtrace.thread.task", "CARD-2", "unrelated", "x"),
		}}},
	}}
	if _, err := in.Traces(ctx, rs); err != nil {
		t.Fatal(err)
	}

	h := viewer.New(conn).Handler()
	for _, c := range []struct{ query, want string }{
		{"task=CARD-2", "conv-task"},
		{"attr.board=ops&task=CARD-2", "conv-task"},
		{"task=CARD-1", ""}, // replaced by the later span's value
		{"attr.unrelated=x", ""},
		{"q=card-2", "conv-task"},
	} {
		var got statusAnswer
		if getJSON(t, h, "/api/threads?"+c.query, http.StatusOK, &got); got.ids() != c.want {
			t.Errorf("GET /api/threads?%s = %q, want %q", c.query, got.ids(), c.want)
		}
	}
	th, err := store.New(conn, 100, time.Minute).Thread(ctx, "conv-task")
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Attributes) != 2 || th.Attributes["task"] != "CARD-2" || th.Attributes["board"] != "ops" {
		t.Errorf("Store.Thread attributes %v, want task CARD-2 and board ops", th.Attributes)
	}
	// One call returns every turn of every thread of a task.
	task := get(t, h, "/api/tasks/task/CARD-2?format=jsonl")
	if task.status != http.StatusOK || strings.Count(task.body, `"type":"turn"`) != 4 || !strings.Contains(task.body, `"conv-task"`) {
		t.Errorf("GET /api/tasks/task/CARD-2: %d, want the 4 turns of conv-task:\n%s", task.status, task.body)
	}
	if none := get(t, h, "/api/tasks/task/CARD-1"); none.status != http.StatusNotFound || !strings.Contains(none.body, "no thread has the attribute task=CARD-1") {
		t.Errorf("GET /api/tasks/task/CARD-1: %d %s, want 404 saying no thread has it", none.status, none.body)
	}
	// The thread's page shows them in its header, each linking to its list.
	page := get(t, h, "/threads/conv-task").body
	header := page[:strings.Index(page, `<form class="thread-filters"`)]
	if !strings.Contains(header, `href="/?attr.task=CARD-2"`) || !strings.Contains(header, `href="/?attr.board=ops"`) {
		t.Errorf("the thread page's header lacks its attributes:\n%s", header)
	}
}
