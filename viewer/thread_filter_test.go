package viewer_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

const xssHref = `javascript:alert(1)`

// filterFixture records a thread in three phases, in English, Korean,
// Japanese and emoji, with a sub-agent that calls a tool, and returns the
// ids of its turns in the order they were said.
func filterFixture(t *testing.T) (http.Handler, []string) {
	h, conn := newServer(t)
	const th = "th-f"
	pp, pr := call(th, "f-plan", "plan", 0, "planner", "openai", "gpt-5", 10, "plan the launch", "안녕하세요 세계: the plan")
	rp, rr := call(th, "f-rev", "Review", 0, "reviewer", "anthropic", "claude", 20, "review it", "こんにちは世界 looks good")
	ep, er := call(th, "f-exec", "execute", 0, "한국어봇", "openai", "gpt-5", 30, "run it", "🚀 launched")
	ep.Agent, er.Agent = "sub1", "sub1"
	tc := schema.Turn{
		TurnID: "f-tool:tool_call:0", TraceID: "trace-th-f", SpanID: "f-tool", Project: "proj", ThreadID: th,
		Phase: "execute", Speaker: "한국어봇", Agent: "sub1", Role: schema.RoleToolCall, Operation: schema.OperationExecuteTool,
		ToolName: "grep", ToolCallID: "tc1", Content: `{"pattern":"x"}`, StartNS: at(40), Status: schema.StatusOK,
	}
	tr := tc
	tr.TurnID, tr.Role, tr.Seq, tr.Content, tr.StartNS, tr.DurationNS = "f-tool:tool_result:1", schema.RoleToolResult, 1, "3 matches", at(41), 1e9
	for _, turn := range []*schema.Turn{&pp, &pr, &rp, &rr} {
		turn.SessionID = "sess-1"
	}
	for _, turn := range []*schema.Turn{&ep, &er, &tc, &tr} {
		turn.SessionID = "sess-2"
	}
	testkit.InsertTurns(t, conn, pp, pr, rp, rr, ep, er, tc, tr)
	return h, []string{pp.TurnID, pr.TurnID, rp.TurnID, rr.TurnID, ep.TurnID, er.TurnID, tc.TurnID, tr.TurnID}
}

// turnIDs fetches the turns API and returns the ids of its turns.
func turnIDs(t *testing.T, h http.Handler, path string) []string {
	t.Helper()
	var got turnsBody
	getJSON(t, h, path, http.StatusOK, &got)
	ids := []string{}
	for _, turn := range got.Turns {
		ids = append(ids, turn.TurnID)
	}
	return ids
}

// pageIDs returns the ids of the turn cards of a page, in order.
func pageIDs(page string) []string {
	ids := []string{}
	for _, part := range strings.Split(page, `<article class="turn`)[1:] {
		_, rest, _ := strings.Cut(part, `id="`)
		id, _, _ := strings.Cut(rest, `"`)
		ids = append(ids, strings.NewReplacer("&#43;", "+").Replace(id))
	}
	return ids
}

// Every filter narrows the turns the same way in the page and the API,
// from the same URL parameters.
func TestThreadFilters(t *testing.T) {
	h, all := filterFixture(t)
	pick := func(is ...int) []string {
		ids := []string{}
		for _, i := range is {
			ids = append(ids, all[i])
		}
		return ids
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", all},
		{"phase=plan&phase=review", pick(0, 1, 2, 3)},
		{"phase=PLAN", pick(0, 1)},
		{"phase=deploy", nil},
		{"role=response", pick(1, 3, 5)},
		{"speaker=한국어봇", pick(4, 5, 6, 7)},
		{"session=sess-2", pick(4, 5, 6, 7)},
		{"session=sess-9", nil},
		{"agent=main", pick(0, 1, 2, 3)},
		{"agent=sub1", pick(4, 5, 6, 7)},
		{"agent=all", all},
		{"tool=grep", pick(6, 7)},
		{"from=2026-05-01T09:00:30Z", pick(4, 5, 6, 7)},
		{"to=2026-05-01T09:00:20Z", pick(0, 1, 2)},
		{"from=2026-05-01T09:00:20&to=2026-05-01T09:00:31", pick(2, 3, 4, 5)},
		{"q=세계", pick(1)},
		{"q=世界", pick(3)},
		{"q=こんにちは", pick(3)},
		{"q=🚀", pick(5)},
		{"q=한국어", pick(4, 5, 6, 7)}, // the speaker matches
		{"q=LAUNCH", pick(0, 5)},    // case-insensitive
		{"q=nowhere", nil},
		{"phase=execute&role=response&q=launch", pick(5)},
		{"agent=main&role=prompt&phase=review", pick(2)},
		{"starred=1", nil},
	}
	for _, tt := range tests {
		q := "?" + tt.query
		if tt.want == nil {
			tt.want = []string{}
		}
		if got := turnIDs(t, h, "/api/threads/th-f/turns"+q); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("GET /api/threads/th-f/turns%s: turns %q, want %q", q, got, tt.want)
		}
		res := get(t, h, "/threads/th-f"+q)
		if res.status != http.StatusOK {
			t.Errorf("GET /threads/th-f%s: status %d", q, res.status)
			continue
		}
		// The page groups by phase: compare as sets.
		got := pageIDs(res.body)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.want))) {
			t.Errorf("GET /threads/th-f%s: cards %q, want %q", q, got, tt.want)
		}
	}
}

// The filter bar shows what the page filters by, so that the URL can be
// shared and the form sent again.
func TestThreadFilterBar(t *testing.T) {
	h, _ := filterFixture(t)
	page := get(t, h, "/threads/th-f?phase=plan&phase=execute&role=response&agent=main&q=%EC%84%B8%EA%B3%84&starred=0&from=24h").body
	for _, want := range []string{
		`<form class="thread-filters" method="get" action="/threads/th-f" data-thread="th-f">`,
		`<input type="checkbox" name="phase" value="plan" checked> Plan <span class="count" title="provider calls">1</span>`,
		`<input type="checkbox" name="phase" value="review"> Review <span class="count" title="provider calls">1</span>`,
		`<input type="checkbox" name="phase" value="execute" checked> Execute <span class="count" title="provider calls">1</span>`,
		`<option selected>response</option>`,
		`<option value="main" selected>main only</option>`,
		`<option>sub1</option>`,
		`<option>grep</option>`,
		`<select name="session"><option value="">all</option><option value="sess-1" title="sess-1">sess-1</option><option value="sess-2" title="sess-2">sess-2</option></select>`,
		`<input type="search" name="q" value="세계"`,
		`<input type="text" name="from" value="24h"`,
		`<input type="checkbox" name="starred" value="1">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("filter bar lacks %q:\n%s", want, page[strings.Index(page, "<form"):strings.Index(page, "</form>")])
		}
	}
	// Default: every chip on.
	page = get(t, h, "/threads/th-f").body
	if n := strings.Count(page, `name="phase" value="`); n != 3 || strings.Count(page, `checked> `) != 3 {
		t.Errorf("default page: %d phase chips, %d checked; want 3 and 3", n, strings.Count(page, `checked> `))
	}
}

// Search matches are marked in content and speaker, in any script; the
// rest stays escaped text.
func TestThreadSearchHighlight(t *testing.T) {
	h, all := filterFixture(t)
	tests := []struct {
		q, turn string
		want    string
	}{
		{"세계", all[1], "\n<pre>\n안녕하세요 <mark>세계</mark>: the plan</pre>"},
		{"こんにちは", all[3], "\n<pre>\n<mark>こんにちは</mark>世界 looks good</pre>"},
		{"🚀", all[5], "\n<pre>\n<mark>🚀</mark> launched</pre>"},
		{"LAUNCH", all[5], "\n<pre>\n🚀 <mark>launch</mark>ed</pre>"},
		{"한국어", all[4], `<span class="badge speaker prov-0"><mark>한국어</mark>봇</span>`},
	}
	for _, tt := range tests {
		page := get(t, h, "/threads/th-f?q="+url.QueryEscape(tt.q)).body
		if card := callCard(t, page, tt.turn); !strings.Contains(card, tt.want) {
			t.Errorf("q=%s: card %s lacks %q:\n%s", tt.q, tt.turn, tt.want, card)
		}
	}
	// Without a search nothing is marked.
	if page := get(t, h, "/threads/th-f").body; strings.Contains(page, "<mark>") {
		t.Error("page without q has <mark>")
	}
}

func TestThreadFilterErrors(t *testing.T) {
	h, _ := filterFixture(t)
	tests := []struct{ query, field string }{
		{"from=yesterday", "from"},
		{"to=2026-13-01", "to"},
		{"from=2026-05-02&to=2026-05-01", "to"},
		{"starred=maybe", "starred"},
		{"limit=0", "limit"},
		{"limit=abc", "limit"},
		{"limit=100001", "limit"},
		{"q=" + strings.Repeat("가", 1001), "q"},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/threads/th-f/turns?", "/threads/th-f?", "/api/threads/th-f/markdown?"} {
			res := get(t, h, path+tt.query)
			if res.status != http.StatusBadRequest || !strings.Contains(res.body, tt.field+":") {
				t.Errorf("GET %s%s: status %d, body %q; want 400 naming %s", path, tt.query, res.status, res.body, tt.field)
			}
		}
	}
}

// A tool call and its result link to each other.
func TestThreadToolPairing(t *testing.T) {
	h, all := filterFixture(t)
	page := get(t, h, "/threads/th-f").body
	tests := []struct{ turn, want string }{
		{all[6], `<p class="pair">→ result <a href="#f-tool%3atool_result%3a1">한국어봇 · execute · tool_result · grep</a></p>`},
		{all[7], `<p class="pair">← result of <a href="#f-tool%3atool_call%3a0">한국어봇 · execute · tool_call · grep</a></p>`},
	}
	for _, tt := range tests {
		if card := callCard(t, page, tt.turn); !strings.Contains(card, tt.want) {
			t.Errorf("card %s lacks %q:\n%s", tt.turn, tt.want, card)
		}
	}
	if card := article(t, page, all[5]); strings.Contains(card, `class="pair"`) {
		t.Errorf("a chat response is paired with a tool:\n%s", card)
	}
}

// The thread lists its traces, and every turn links to its span.
func TestThreadTraceLinks(t *testing.T) {
	h, conn := newServer(t)
	p1, r1 := call("th-tr", "s1", "plan", 0, "planner", "openai", "gpt-5", 10, "one", "two")
	p2, r2 := call("th-tr", "s2", "plan", 0, "planner", "openai", "gpt-5", 5, "three", "four")
	p2.TraceID, r2.TraceID = "trace-b/x", "trace-b/x"
	p3, r3 := call("th-one", "s3", "plan", 0, "planner", "openai", "gpt-5", 5, "five", "six")
	testkit.InsertTurns(t, conn, p1, r1, p2, r2, p3, r3)
	page := get(t, h, "/threads/th-tr").body
	for _, want := range []string{
		`<details class="traces"><summary>2 traces</summary> <a class="trace-link" href="/traces/trace-b%2Fx">trace-b/x</a> <a class="trace-link" href="/traces/trace-th-tr">trace-th-tr</a></details>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if card := callCard(t, page, r1.TurnID); !strings.Contains(card, `<a class="trace" href="/traces/trace-th-tr?span=s1">trace</a>`) {
		t.Errorf("card %s lacks its trace link:\n%s", r1.TurnID, card)
	}
	if page := get(t, h, "/threads/th-one").body; !strings.Contains(page, `<p class="traces">Trace: <a class="trace-link" href="/traces/trace-th-one">trace-th-one</a></p>`) {
		t.Error("a thread of one trace does not link it")
	}
}
