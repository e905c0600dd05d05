package viewer_test

import (
	"context"
	"encoding/hex"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// The spans row of a call sent over OTLP does not repeat its content, which
// its turns hold: the detail pane and its JSON show the call's input and
// output as before, and list the content attributes rebuilt from the
// turns (the prompt whole, its history put back), marked so, cut as the
// row's values are unless ?all=1. A tool run's arguments and result too.
func TestSpanDetailRebuildsContent(t *testing.T) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn, collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	text := func(role, s string) genai.Message {
		return genai.Message{Role: role, Parts: []genai.Part{genai.Text(s)}}
	}
	first := []genai.Message{text("system", "You fix tests. "+strings.Repeat("Be careful. ", 100)), text("user", "The test fails.")}
	second := append(slices.Clone(first), text("assistant", "I will run it."), text("user", "FAIL: want 2, got 3"))
	start := time.Now()
	trace, _ := hex.DecodeString("7b8efff798038103d269b633813fc60c")
	span := func(id string, n int, kv ...string) *tracepb.Span {
		sid, _ := hex.DecodeString(id)
		var attrs []*commonpb.KeyValue
		for i := 0; i+1 < len(kv); i += 2 {
			attrs = append(attrs, &commonpb.KeyValue{Key: kv[i], Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: kv[i+1]}}})
		}
		at := start.Add(time.Duration(n) * time.Second)
		return &tracepb.Span{TraceId: trace, SpanId: sid, Name: "span " + id, Attributes: attrs,
			StartTimeUnixNano: uint64(at.UnixNano()), EndTimeUnixNano: uint64(at.Add(time.Second).UnixNano())}
	}
	call := func(id string, n int, input []genai.Message, answer string) *tracepb.Span {
		return span(id, n, "gen_ai.operation.name", "chat", "gen_ai.provider.name", "openai", "gen_ai.request.model", "gpt-5",
			"gen_ai.conversation.id", "rebuilt", "gen_ai.input.messages", genai.Render(input),
			"gen_ai.output.messages", genai.Render([]genai.Message{text("assistant", answer)}))
	}
	if _, err := in.Traces(context.Background(), []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		call("d000000000000001", 0, first, "I will run it."),
		call("d000000000000002", 1, second, "Fixed."),
		span("d000000000000003", 2, "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "go_test", "gen_ai.tool.call.id", "t1",
			"gen_ai.conversation.id", "rebuilt", "gen_ai.tool.call.arguments", `{"pkg":"./..."}`, "gen_ai.tool.call.result", "ok"),
	}}}}}); err != nil {
		t.Fatal(err)
	}
	h := viewer.New(conn).Handler()
	api := "/api/traces/7b8efff798038103d269b633813fc60c/spans/"
	detail := func(spanID, query string) viewer.SpanDetail {
		var d viewer.SpanDetail
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			getJSON(t, h, api+spanID+query, http.StatusOK, &d)
			if len(d.Output) > 0 || time.Now().After(deadline) {
				return d // a staged call may be written by the sweep
			}
		}
	}
	rebuilt := func(d viewer.SpanDetail) []string {
		var out []string
		for _, a := range d.Rebuilt {
			out = append(out, a.Key+"="+a.Value)
		}
		return out
	}
	answer := genai.Render([]genai.Message{text("assistant", "Fixed.")})

	d := detail("d000000000000002", "?all=1")
	if len(d.Input) != 1 || d.Input[0].Content != genai.Render(second) || len(d.Input[0].Earlier) != 3 ||
		len(d.Output) != 1 || d.Output[0].Text != "Fixed." {
		t.Errorf("input %+v, output %+v: want the whole prompt, three messages of it history, and the answer", d.Input, d.Output)
	}
	marker := schema.Attr{Key: schema.KeyContentInTurns, Value: schema.ContentInTurns}
	if !slices.Contains(d.Attributes, marker) || slices.ContainsFunc(d.Attributes, func(a schema.Attr) bool { return a.Key == schema.KeyInputMessages }) {
		t.Errorf("row attributes %v: want the marker, and no content", d.Attributes)
	}
	if got, want := rebuilt(d), []string{schema.KeyInputMessages + "=" + genai.Render(second), schema.KeyOutputMessages + "=" + answer}; !slices.Equal(got, want) {
		t.Errorf("?all=1 rebuilt attributes\n%q\nwant\n%q", got, want)
	}
	if d.Rebuilt[0].TurnID != d.Input[0].TurnID || d.Rebuilt[0].Cut {
		t.Errorf("rebuilt %+v: want it from the prompt turn %s, whole", d.Rebuilt[0], d.Input[0].TurnID)
	}

	d = detail("d000000000000002", "")
	if len(d.Rebuilt) != 2 || !d.Rebuilt[0].Cut || len([]rune(d.Rebuilt[0].Value)) != store.DetailValueRunes || d.Rebuilt[1].Cut || d.AllAPIURL == "" {
		t.Errorf("rebuilt %+v, all %q: want the prompt cut to %d runes, the answer whole, and a link to all", d.Rebuilt, d.AllAPIURL, store.DetailValueRunes)
	}
	page := get(t, h, "/traces/7b8efff798038103d269b633813fc60c/spans/d000000000000002/detail?all=1")
	if page.status != http.StatusOK || !strings.Contains(page.body, `class="detail-table detail-rebuilt"`) ||
		!strings.Contains(page.body, "from the call's turns") || !strings.Contains(page.body, html.EscapeString(genai.Render(second))) {
		t.Errorf("pane %d: want the rebuilt content attributes marked as from the turns:\n%s", page.status, page.body)
	}

	d = detail("d000000000000003", "")
	if got, want := rebuilt(d), []string{schema.KeyToolCallArguments + `={"pkg":"./..."}`, schema.KeyToolCallResult + "=ok"}; !slices.Equal(got, want) {
		t.Errorf("tool run: rebuilt attributes %q, want %q", got, want)
	}
}
