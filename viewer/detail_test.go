package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// demoSpan returns the trace and id of the demo's first span (by start)
// that satisfies where, SQL on the spans table.
func demoSpan(t *testing.T, conn driver.Conn, where string, args ...any) (traceID, spanID string) {
	t.Helper()
	err := conn.QueryRow(context.Background(), "SELECT trace_id, span_id FROM spans WHERE "+where+" ORDER BY start_ns LIMIT 1", args...).
		Scan(&traceID, &spanID)
	if err != nil {
		t.Fatalf("demo span where %s: %v", where, err)
	}
	return traceID, spanID
}

// spanTruth is what SQL says of one span: its turns' usage, each turn
// once, and its row's attributes and events.
type spanTruth struct {
	in, out, cacheRead, cacheWrite, reasoning *uint64 // nil: no turn reported it
	source                                    string
	attrs                                     uint64
	events                                    []string
}

func readSpanTruth(t *testing.T, conn driver.Conn, traceID, spanID string) spanTruth {
	t.Helper()
	ctx := context.Background()
	var s spanTruth
	err := conn.QueryRow(ctx, `
SELECT sum(tokens_in), sum(tokens_out), sum(tokens_cache_read), sum(tokens_cache_write), sum(tokens_reasoning),
       anyIf(cost_source, cost_source != '')
FROM (SELECT * FROM conversations WHERE trace_id = ? AND span_id = ? ORDER BY turn_id, revision DESC LIMIT 1 BY turn_id)`,
		traceID, spanID).Scan(&s.in, &s.out, &s.cacheRead, &s.cacheWrite, &s.reasoning, &s.source)
	if err != nil {
		t.Fatalf("usage of span %s: %v", spanID, err)
	}
	if err := conn.QueryRow(ctx, "SELECT length(attributes.key), events.name FROM spans WHERE trace_id = ? AND span_id = ? LIMIT 1",
		traceID, spanID).Scan(&s.attrs, &s.events); err != nil {
		t.Fatalf("attributes of span %s: %v", spanID, err)
	}
	return s
}

// count writes a count as the pane does: — when unknown.
func count(p *uint64) string {
	if p == nil {
		return store.Unknown
	}
	return store.FormatCount(*p)
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// A provider call of the demo, in the pane and as JSON: its whole prompt
// and answer, its tokens as SQL adds them up, where its cost came from,
// its attributes and events, and links to its thread, trace and JSON.
func TestSpanDetailOfProviderCalls(t *testing.T) {
	h, conn, thread := demoServer(t)
	tests := []struct {
		name, phase, source string
	}{
		{"chat claude-sonnet-4-5", "plan", schema.CostPriced},
		{"chat anthropic/claude-opus-4.1", "plan", schema.CostProvided},
		{"chat qwen2.5-coder:32b", "review", schema.CostNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traceID, spanID := demoSpan(t, conn, "name = ? AND phase = ?", tt.name, tt.phase)
			truth := readSpanTruth(t, conn, traceID, spanID)
			if truth.source != tt.source {
				t.Fatalf("demo span %s has cost source %q in SQL, the test wants %q", tt.name, truth.source, tt.source)
			}
			var prompt string
			if err := conn.QueryRow(context.Background(), "SELECT content FROM conversations WHERE span_id = ? AND role = 'prompt' LIMIT 1", spanID).
				Scan(&prompt); err != nil {
				t.Fatal(err)
			}

			var d viewer.SpanDetail
			getJSON(t, h, "/api/traces/"+traceID+"/spans/"+spanID, http.StatusOK, &d)
			if len(d.Input) != 1 || d.Input[0].Role != schema.RolePrompt || d.Input[0].Content != prompt || d.Input[0].ContentCut {
				t.Errorf("input = %+v, want the prompt, whole", d.Input)
			}
			var roles []string
			for _, m := range d.Input[0].Messages {
				roles = append(roles, m.Role)
			}
			if len(roles) < 2 || roles[0] != "system" || !slices.Contains(roles, "user") {
				t.Errorf("prompt messages by role = %q, want system then user", roles)
			}
			if len(d.Output) != 1 || d.Output[0].Role != schema.RoleResponse || (d.Output[0].Text == "" && len(d.Output[0].Messages) == 0) {
				t.Errorf("output = %+v, want the response with its text", d.Output)
			}
			got := fmt.Sprint(count(d.TokensIn), count(d.TokensOut), count(d.Usage.CacheRead), count(d.Usage.CacheWrite), count(d.Usage.Reasoning), d.Usage.CostSource)
			want := fmt.Sprint(count(truth.in), count(truth.out), count(truth.cacheRead), count(truth.cacheWrite), count(truth.reasoning), truth.source)
			if got != want {
				t.Errorf("in, out, cache read, cache write, reasoning, cost source = %s, want %s (SQL)", got, want)
			}
			if uint64(d.AttributesTotal) != truth.attrs || len(d.Attributes) != d.AttributesTotal || d.AllURL != "" {
				t.Errorf("%d of %d attributes, all at %q; want all %d, nothing capped", len(d.Attributes), d.AttributesTotal, d.AllURL, truth.attrs)
			}
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Name)
			}
			if !slices.Equal(events, truth.events) || d.EventsTotal != len(truth.events) {
				t.Errorf("events %q (of %d), want %q", events, d.EventsTotal, truth.events)
			}
			if want := "/threads/" + thread + "#" + schema.PromptTurnID(spanID); d.ThreadURL != want {
				t.Errorf("thread link %q, want %q", d.ThreadURL, want)
			}

			res := get(t, h, viewerDetailURL(traceID, spanID))
			if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/html") {
				t.Fatalf("fragment: status %d, %s", res.status, res.header.Get("Content-Type"))
			}
			for _, want := range []string{
				`<article class="detail" data-detail-span="` + spanID + `"`,
				`<dd class="tok-in">` + count(truth.in) + `</dd>`,
				`<dd class="tok-cache-read">` + count(truth.cacheRead) + `</dd>`,
				`<span class="cost-source" title="`,
				`>` + tt.source + `</span>`,
				`<th scope="row">gen_ai.operation.name</th><td>chat</td>`,
				`<td class="ev-name">gen_ai.prompt</td>`,
				`<span class="msg-role">system</span>`,
				`href="/threads/` + thread + `#` + schema.PromptTurnID(spanID) + `"`,
				`href="/traces/` + traceID + `?span=` + spanID + `"`,
				`href="/api/traces/` + traceID + `/spans/` + spanID + `"`,
				`data-detail="/traces/` + traceID + `/spans/` + d.ParentSpanID + `/detail"`, // the parent span
			} {
				if !strings.Contains(res.body, want) {
					t.Errorf("fragment lacks %q:\n%s", want, res.body)
				}
			}
			if i := strings.Index(res.body, "<html"); i >= 0 || strings.Contains(res.body, "<head>") {
				t.Errorf("fragment is a whole page: …%s…", res.body[max(0, i-200):min(len(res.body), i+200)])
			}
		})
	}
}

// viewerDetailURL is the detail fragment's path.
func viewerDetailURL(traceID, spanID string) string {
	return "/traces/" + url.PathEscape(traceID) + "/spans/" + url.PathEscape(spanID) + "/detail"
}

// A turn longer than a page's 64 KB cut is whole in the pane; a span's
// attributes and events are capped at 50, values at 1 KB, with a link
// that shows them all.
func TestSpanDetailLongTurnAndManyAttributes(t *testing.T) {
	h, conn, thread := demoServer(t)
	traceID, root := demoSpan(t, conn, "name = 'demo pipeline'")
	long := strings.Repeat("é", 3000)
	sp := schema.Span{
		TraceID: traceID, SpanID: "big-call", ParentSpanID: root, Project: "demo", ThreadID: thread,
		Name: "chat gpt-5", Kind: "client", Phase: "verify", Provider: "openai", Model: "gpt-5", Operation: "chat",
		StartNS: 1, DurationNS: 2, Status: schema.StatusOK,
	}
	for i := range 60 {
		a := schema.Attr{Key: fmt.Sprintf("k%02d", i), Value: fmt.Sprint(i)}
		if i == 7 {
			a.Value = long
		}
		sp.Attributes = append(sp.Attributes, a)
	}
	for i := range 55 {
		sp.EventNames, sp.EventTimesNS = append(sp.EventNames, fmt.Sprintf("ev%02d", i)), append(sp.EventTimesNS, uint64(i))
	}
	var start uint64
	if err := conn.QueryRow(context.Background(), "SELECT min(start_ns) FROM spans WHERE trace_id = ?", traceID).Scan(&start); err != nil {
		t.Fatal(err)
	}
	sp.StartNS, sp.DurationNS = start+1000, 2000
	testkit.InsertSpans(t, conn, sp)
	prompt := strings.Repeat("read this line again.\n", 5000) + "END-OF-PROMPT"
	answer := strings.Repeat("가", 30000) + "END-OF-ANSWER"
	if len(prompt) <= store.PageContentBytes || len(answer) <= store.PageContentBytes {
		t.Fatalf("prompt %d and answer %d bytes, want both over the page cut %d", len(prompt), len(answer), store.PageContentBytes)
	}
	p, r := call(thread, "big-call", "verify", 0, "checker", "openai", "gpt-5", 0, prompt, answer)
	for _, row := range []*schema.Turn{&p, &r} {
		row.TraceID, row.Project, row.ParentSpanID = traceID, "demo", root
	}
	p.StartNS, r.StartNS = start+1000, start+3000
	r.TokensIn, r.TokensOut, r.TokensCacheRead, r.CostUSD, r.CostSource = u32(10), u32(20), u32(4), f64(0.01), schema.CostPriced
	testkit.InsertTurns(t, conn, p, r)

	base := "/api/traces/" + traceID + "/spans/big-call"
	var d viewer.SpanDetail
	getJSON(t, h, base, http.StatusOK, &d)
	if len(d.Input) != 1 || d.Input[0].Content != prompt || d.Input[0].ContentCut || d.Input[0].ContentURL != "" {
		t.Errorf("input: %d turns, first %d bytes; want the prompt whole (%d bytes)", len(d.Input), len(d.Input[0].Content), len(prompt))
	}
	if len(d.Output) != 1 || d.Output[0].Text != answer {
		t.Errorf("output: want the answer whole (%d bytes)", len(answer))
	}
	if len(d.Attributes) != 50 || d.AttributesTotal != 60 || len(d.Events) != 50 || d.EventsTotal != 55 {
		t.Errorf("%d of %d attributes, %d of %d events; want 50 of 60 and 50 of 55", len(d.Attributes), d.AttributesTotal, len(d.Events), d.EventsTotal)
	}
	if v := d.Attributes[7].Value; utf8.RuneCountInString(v) != 1024 || !strings.HasPrefix(long, v) {
		t.Errorf("long attribute value: %d runes, want its first 1024", utf8.RuneCountInString(v))
	}
	if want := viewerDetailURL(traceID, "big-call") + "?all=1"; d.AllURL != want || d.AllAPIURL != base+"?all=1" {
		t.Errorf("show all at %q and %q, want %q and %s?all=1", d.AllURL, d.AllAPIURL, want, base)
	}
	if deref(d.Usage.CacheRead) != 4 || d.Usage.CostSource != schema.CostPriced || deref(d.TokensIn) != 10 {
		t.Errorf("usage %+v, tokens in %v; want cache read 4, priced, 10 in", d.Usage, d.TokensIn)
	}

	res := get(t, h, viewerDetailURL(traceID, "big-call"))
	for _, want := range []string{"END-OF-PROMPT", "END-OF-ANSWER", `<span class="count">50 of 60</span>`, `<span class="count">50 of 55</span>`,
		`data-detail="` + d.AllURL + `"`, `href="/traces/` + traceID + `?span=big-call&amp;all=1"`, `<th scope="row">k49</th>`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("fragment lacks %q", want)
		}
	}
	if strings.Contains(res.body, "k50") || strings.Contains(res.body, "ev50") {
		t.Errorf("capped fragment shows the 51st attribute or event")
	}

	var all viewer.SpanDetail
	getJSON(t, h, base+"?all=1", http.StatusOK, &all)
	if len(all.Attributes) != 60 || all.Attributes[7].Value != long || len(all.Events) != 55 || all.AllURL != "" {
		t.Errorf("all: %d attributes (long value %d runes), %d events, all at %q; want 60, 3000 runes, 55, none",
			len(all.Attributes), utf8.RuneCountInString(all.Attributes[7].Value), len(all.Events), all.AllURL)
	}
	// Without scripts, the trace page shows the same.
	if page := get(t, h, "/traces/"+traceID+"?span=big-call&all=1").body; !strings.Contains(page, `<th scope="row">k59</th>`) {
		t.Errorf("trace page with ?span=big-call&all=1 lacks the 60th attribute")
	}
	res = get(t, h, viewerDetailURL(traceID, "big-call")+"?all=1")
	if !strings.Contains(res.body, `<th scope="row">k59</th>`) || !strings.Contains(res.body, `<td class="ev-name">ev54</td>`) ||
		!strings.Contains(res.body, long) {
		t.Errorf("fragment with all=1 lacks the 60th attribute, the 55th event or the long value whole")
	}
}

// Spans that are no provider call show their name, kind, status,
// attributes and events; a tool run its arguments, indented, and result.
func TestSpanDetailOfOtherSpans(t *testing.T) {
	h, conn, thread := demoServer(t)
	traceID, root := demoSpan(t, conn, "name = 'demo pipeline'")
	var d viewer.SpanDetail
	getJSON(t, h, "/api/traces/"+traceID+"/spans/"+root, http.StatusOK, &d)
	if d.LLM || d.Kind != "internal" || d.Status != schema.StatusOK || len(d.Input)+len(d.Output) != 0 || len(d.Events) != 0 ||
		len(d.Attributes) != 1 || d.Attributes[0] != (schema.Attr{Key: schema.KeyConversationID, Value: thread}) {
		t.Errorf("root span detail = %+v, want an internal span with its one attribute, no turns, no events", d)
	}
	res := get(t, h, viewerDetailURL(traceID, root))
	for _, want := range []string{`<span class="span-name">demo pipeline</span>`, `<span class="pill kind">internal</span>`,
		`<th scope="row">gen_ai.conversation.id</th><td>` + thread + `</td>`, `<span class="pill ok">ok</span>`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("root fragment lacks %q:\n%s", want, res.body)
		}
	}
	if strings.Contains(res.body, "Tokens and cost") {
		t.Errorf("root fragment shows usage, which a pipeline span has none of")
	}

	_, tool := demoSpan(t, conn, "name = 'execute_tool read_file'")
	truth := readSpanTruth(t, conn, traceID, tool)
	getJSON(t, h, "/api/traces/"+traceID+"/spans/"+tool, http.StatusOK, &d)
	var events []string
	for _, e := range d.Events {
		events = append(events, e.Name)
	}
	if d.LLM || uint64(len(d.Attributes)) != truth.attrs || !slices.Equal(events, truth.events) || len(truth.events) == 0 {
		t.Errorf("tool span: LLM %v, %d attributes, events %q; want no LLM, %d attributes, events %q", d.LLM, len(d.Attributes), events, truth.attrs, truth.events)
	}
	if len(d.Input) != 1 || d.Input[0].Role != schema.RoleToolCall || !strings.Contains(d.Input[0].Text, "{\n  \"") {
		t.Errorf("tool span input = %+v, want the tool call's arguments as indented JSON", d.Input)
	}
	if len(d.Output) != 1 || d.Output[0].Role != schema.RoleToolResult {
		t.Errorf("tool span output = %+v, want the tool result", d.Output)
	}
	if d.ParentName != "execute plan" {
		t.Errorf("tool span's parent %q, want execute plan", d.ParentName)
	}
	res = get(t, h, viewerDetailURL(traceID, tool))
	for _, want := range []string{`<th scope="row">gen_ai.tool.name</th><td>read_file</td>`, `<td class="ev-name">gen_ai.response</td>`,
		`<span class="tool">read_file</span>`, `parent: execute plan</a>`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("tool fragment lacks %q:\n%s", want, res.body)
		}
	}
}

// An unknown trace or span is 404 saying which; an id no span can have,
// or a bad all, is 400 naming the parameter; a call still running (turns,
// no span row) has a detail too.
func TestSpanDetailErrors(t *testing.T) {
	h := traceFixture(t)
	tests := []struct {
		path   string
		status int
		reason string
	}{
		{"/traces/nope/spans/llm", http.StatusNotFound, "trace not found"},
		{"/traces/trace-th1/spans/nope", http.StatusNotFound, `trace "trace-th1" has no span "nope"`},
		{"/traces/trace-th1/spans/%00", http.StatusBadRequest, `span_id: "\x00" holds a control character`},
		{"/traces/%FF/spans/llm", http.StatusBadRequest, "trace_id: not UTF-8"},
		{"/traces/trace-th1/spans/" + strings.Repeat("a", 600), http.StatusBadRequest, "span_id: longer than 512 bytes"},
		{"/traces/trace-th1/spans/llm?all=maybe", http.StatusBadRequest, `all: "maybe" is not 1 or 0`},
	}
	for _, tt := range tests {
		var e struct{ Error string }
		getJSON(t, h, "/api"+tt.path, tt.status, &e)
		if e.Error != tt.reason {
			t.Errorf("GET /api%s: error %q, want %q", tt.path, e.Error, tt.reason)
		}
		frag, q, _ := strings.Cut(tt.path, "?")
		if q != "" {
			q = "?" + q
		}
		res := get(t, h, frag+"/detail"+q)
		if res.status != tt.status || !strings.Contains(res.body, `<p class="error-msg">`) || strings.Contains(res.body, "<html") {
			t.Errorf("GET %s/detail%s: status %d, want %d and the reason as a fragment:\n%s", frag, q, res.status, tt.status, res.body)
		}
	}

	var d viewer.SpanDetail
	getJSON(t, h, "/api/traces/trace-th1/spans/run", http.StatusOK, &d)
	if !d.Running || len(d.Input) != 1 || d.Input[0].Content != "go on" || len(d.Output) != 0 || d.Attributes == nil || len(d.Attributes) != 0 {
		t.Errorf("running call's detail = %+v, want running, its prompt, no answer, no attributes", d)
	}
}
