package viewer_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

type turnsBody struct {
	ThreadID string       `json:"thread_id"`
	Turns    []store.Turn `json:"turns"`
}

func apiFixture(t *testing.T) http.Handler {
	h, conn := newServer(t)
	const th = "th-api"
	p1, r1 := call(th, "k1", "Plan", 0, "planner", "openai", "gpt-5", 10, "plan", "the plan")
	r1.TokensIn, r1.TokensOut, r1.CostUSD = u32(100), u32(20), f64(0.01)
	r1.Attributes = []schema.Attr{{Key: "http.status", Value: "200"}}
	p2, r2 := call(th, "k2", "review", 0, "critic", "anthropic", "claude", 20, "review", "ok")
	p3, r3 := call(th, "k3", "plan", 1, "planner", "openai", "gpt-5", 30, "plan again", "plan v2")
	// A system row sharing its prompt's start time: seq orders them, not
	// the turn id.
	sys := p3
	sys.TurnID, sys.Role, sys.Seq, sys.Content = "k3:system:0", schema.RoleSystem, 0, "be brief"
	p3.TurnID, p3.Seq = "k3:prompt:1", 1
	// Another thread's turns never leak in.
	op, oresp := call("th-other", "o1", "plan", 0, "x", "openai", "gpt-5", 15, "other", "other")
	testkit.InsertTurns(t, conn, r3, sys, p3, r2, p2, r1, p1, op, oresp)
	testkit.InsertTurns(t, conn, r1) // delivered twice
	return h
}

func TestTurnsAPI(t *testing.T) {
	h := apiFixture(t)
	tests := []struct {
		query string
		want  []string // turn ids, in order
	}{
		{"", []string{"k1:prompt:0", "k1:response:1", "k2:prompt:0", "k2:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?phase=plan", []string{"k1:prompt:0", "k1:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?phase=PLAN", []string{"k1:prompt:0", "k1:response:1", "k3:system:0", "k3:prompt:1", "k3:response:1"}},
		{"?role=response", []string{"k1:response:1", "k2:response:1", "k3:response:1"}},
		{"?phase=review&role=prompt", []string{"k2:prompt:0"}},
		{"?role=Response", nil}, // roles match exactly
		{"?phase=deploy", nil},
	}
	for _, tt := range tests {
		path := "/api/threads/th-api/turns" + tt.query
		var got turnsBody
		body := getJSON(t, h, path, http.StatusOK, &got)
		var ids []string
		for _, turn := range got.Turns {
			ids = append(ids, turn.TurnID)
		}
		if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
			t.Errorf("GET %s: turns %q, want %q", path, ids, tt.want)
		}
		if got.ThreadID != "th-api" {
			t.Errorf("GET %s: thread_id %q, want th-api", path, got.ThreadID)
		}
		if len(tt.want) == 0 && !strings.Contains(body, `"turns":[]`) {
			t.Errorf("GET %s = %s, want an empty list, not null", path, body)
		}
	}
}

func TestTurnsAPIValues(t *testing.T) {
	h := apiFixture(t)
	var raw struct {
		Turns []map[string]json.RawMessage `json:"turns"`
	}
	getJSON(t, h, "/api/threads/th-api/turns?role=response", http.StatusOK, &raw)
	if len(raw.Turns) != 3 {
		t.Fatalf("got %d responses, want 3", len(raw.Turns))
	}
	tests := []struct {
		turn  int
		field string
		want  string
	}{
		{0, "tokens_in", "100"},
		{0, "tokens_out", "20"},
		{0, "cost_usd", "0.01"},
		{0, "tokens_cache_read", "null"},
		{0, "attributes", `{"http.status":"200"}`},
		{0, "duration_ns", "1000000000"},
		{1, "tokens_in", "null"},
		{1, "tokens_out", "null"},
		{1, "cost_usd", "null"},
		{1, "running", "false"},
		{1, "attributes", "{}"},
	}
	for _, tt := range tests {
		if got := string(raw.Turns[tt.turn][tt.field]); got != tt.want {
			t.Errorf("response %d: %s = %s, want %s", tt.turn, tt.field, got, tt.want)
		}
	}
}

func TestTurnsAPIRunning(t *testing.T) {
	h, conn := newServer(t)
	p1, r1 := call("th-run", "r1", "plan", 0, "planner", "openai", "gpt-5", 10, "done", "answer")
	p2, _ := call("th-run", "r2", "plan", 0, "planner", "openai", "gpt-5", 20, "still thinking", "")
	p3, _ := call("th-run", "r3", "plan", 0, "planner", "openai", "gpt-5", 30, "failed call", "")
	e3 := p3
	e3.TurnID, e3.Role, e3.Seq, e3.Status, e3.Error = schema.ResponseTurnID("r3", true), schema.RoleError, 1, schema.StatusError, "boom"
	// A chat call answered only by a tool call, as other conventions map
	// it: the answer row's duration says the call ended.
	p4, _ := call("th-run", "r4", "plan", 0, "planner", "openai", "gpt-5", 35, "use a tool", "")
	a4 := p4
	a4.TurnID, a4.Role, a4.Seq, a4.DurationNS = "r4:tool_call:1", schema.RoleToolCall, 1, uint64(2e9)
	tc := schema.Turn{TurnID: "t1:tool_call:0", SpanID: "t1", ThreadID: "th-run", Role: schema.RoleToolCall, StartNS: at(40), Operation: schema.OperationExecuteTool, ToolName: "grep"}
	testkit.InsertTurns(t, conn, p1, r1, beating(p2), p3, e3, p4, a4, beating(tc))

	var got turnsBody
	getJSON(t, h, "/api/threads/th-run/turns?role=prompt", http.StatusOK, &got) // the filter hides the answers; running still sees them
	running := map[string]bool{}
	for _, turn := range got.Turns {
		running[turn.TurnID] = turn.Running
	}
	want := map[string]bool{"r1:prompt:0": false, "r2:prompt:0": true, "r3:prompt:0": false, "r4:prompt:0": false}
	for id, w := range want {
		if r, ok := running[id]; !ok || r != w {
			t.Errorf("%s running = %v (present %v), want %v", id, r, ok, w)
		}
	}
	getJSON(t, h, "/api/threads/th-run/turns?role=tool_call", http.StatusOK, &got)
	if len(got.Turns) != 2 || got.Turns[0].Running || !got.Turns[1].Running {
		t.Errorf("tool calls: %+v, want the answer of r4 not running and t1 (no result yet) running", got.Turns)
	}
}

func TestAPIUnknownThread(t *testing.T) {
	h := apiFixture(t)
	var got map[string]string
	getJSON(t, h, "/api/threads/nope/turns?phase=plan", http.StatusNotFound, &got)
	if got["error"] != "thread not found" {
		t.Errorf("error %q, want thread not found", got["error"])
	}
}

// A turn of megabytes reaches neither the page nor the turns API whole:
// both carry its start, and its content is fetched alone on demand.
func TestLongTurnContent(t *testing.T) {
	h, conn := newServer(t)
	// 3-byte runes: the 64 KiB cut falls inside one.
	long := strings.Repeat("가나다라마바사", 5<<20/21) + "끝"
	p, r := call("th-long", "big", "execute", 0, "worker", "openai", "gpt-5", 10, "write a lot", long)
	testkit.InsertTurns(t, conn, p, r)

	var body struct {
		Turns []map[string]json.RawMessage `json:"turns"`
	}
	getJSON(t, h, "/api/threads/th-long/turns?role=response", http.StatusOK, &body)
	if len(body.Turns) != 1 {
		t.Fatalf("got %d turns, want 1", len(body.Turns))
	}
	var content string
	_ = json.Unmarshal(body.Turns[0]["content"], &content)
	if len(content) > 64<<10 || len(content) < 64<<10-3 || !utf8.ValidString(content) || !strings.HasPrefix(long, content) {
		t.Errorf("API content: %d bytes, valid UTF-8 %v, a prefix %v; want the first 64 KiB less a cut rune", len(content), utf8.ValidString(content), strings.HasPrefix(long, content))
	}
	if got := string(body.Turns[0]["content_cut"]); got != "true" {
		t.Errorf("content_cut = %s, want true", got)
	}
	if got, want := string(body.Turns[0]["content_bytes"]), strconv.Itoa(len(long)); got != want {
		t.Errorf("content_bytes = %s, want %s", got, want)
	}

	page := get(t, h, "/threads/th-long")
	if len(page.body) > 256<<10 {
		t.Errorf("page is %d bytes: the long turn entered it", len(page.body))
	}
	card := article(t, page.body, r.TurnID)
	if !strings.Contains(card, `<button type="button" class="load-full show-full" aria-controls="content-big:response:1">Show full (`) {
		t.Errorf("card lacks the load-full button:\n%.2000s", card)
	}
	if strings.Contains(article(t, page.body, p.TurnID), "load-full") {
		t.Error("a short turn offers to load its full content")
	}

	var whole struct {
		TurnID  string `json:"turn_id"`
		Content string `json:"content"`
	}
	getJSON(t, h, "/api/threads/th-long/turns/big:response:1/content", http.StatusOK, &whole)
	if whole.TurnID != r.TurnID || whole.Content != long {
		t.Errorf("content API: turn %q, %d bytes; want %s, %d bytes", whole.TurnID, len(whole.Content), r.TurnID, len(long))
	}
	var e map[string]string
	getJSON(t, h, "/api/threads/th-long/turns/nope/content", http.StatusNotFound, &e)
	getJSON(t, h, "/api/threads/other/turns/big:response:1/content", http.StatusNotFound, &e)
	if e["error"] != "turn not found" {
		t.Errorf("unknown turn: error %q, want turn not found", e["error"])
	}

	// Markdown is whole.
	md := get(t, h, "/api/threads/th-long/turns/big:response:1/markdown")
	if md.status != http.StatusOK || !strings.Contains(md.body, long) {
		t.Errorf("turn markdown: status %d, %d bytes; want the whole turn", md.status, len(md.body))
	}
}

// A thread over the window shows its newest turns that pass the filters
// and says how many it hides; a larger limit shows more.
func TestTurnWindow(t *testing.T) {
	h, conn := newServer(t)
	const n = 1005
	turns := make([]schema.Turn, n)
	for i := range turns {
		turns[i] = schema.Turn{
			TurnID: fmt.Sprintf("w%04d:prompt:0", i), TraceID: "trace-w", SpanID: fmt.Sprintf("w%04d", i), ThreadID: "th-w",
			Phase: "execute", Speaker: "worker", Role: schema.RolePrompt, Content: fmt.Sprintf("turn %d", i), StartNS: at(i), DurationNS: 1,
		}
	}
	testkit.InsertTurns(t, conn, turns...)
	testkit.InsertTurns(t, conn, turns[n-1]) // delivered twice: still one turn

	page := get(t, h, "/threads/th-w").body
	ids := pageIDs(page)
	if len(ids) != 1000 || ids[0] != "w0005:prompt:0" || ids[999] != "w1004:prompt:0" {
		t.Errorf("page shows %d turns from %v to %v, want the newest 1000, w0005 to w1004", len(ids), ids[:1], ids[len(ids)-1:])
	}
	for _, want := range []string{
		`<span class="shown">1000 of 1005 matching turns shown</span>`,
		`<p class="earlier">5 earlier turns are hidden. <a href="/threads/th-w?limit=1005">Show 5 earlier turns</a></p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if ids := pageIDs(get(t, h, "/threads/th-w?limit=1005").body); len(ids) != n {
		t.Errorf("limit=1005: %d turns, want %d", len(ids), n)
	}
	if page := get(t, h, "/threads/th-w?limit=1005").body; strings.Contains(page, `class="earlier"`) {
		t.Error("limit=1005 still says turns are hidden")
	}
	// The filter form keeps a window asked for, and adds none by default.
	const keep = `<input type="hidden" name="limit" value="1005">`
	if !strings.Contains(get(t, h, "/threads/th-w?limit=1005").body, keep) || strings.Contains(get(t, h, "/threads/th-w").body, `name="limit"`) {
		t.Errorf("filter form: want %s only when limit=1005 was asked for", keep)
	}
	// "Copy whole thread" copies every turn, not only the page's window.
	md := get(t, h, "/api/threads/th-w/markdown").body
	if !strings.Contains(md, "turn 0\n") || !strings.Contains(md, "turn 1004\n") {
		t.Errorf("thread markdown lacks the oldest or the newest of %d turns", n)
	}
	// The window applies after the filters.
	page = get(t, h, "/threads/th-w?q=turn+1&limit=5").body
	if ids := pageIDs(page); strings.Join(ids, ",") != "w1000:prompt:0,w1001:prompt:0,w1002:prompt:0,w1003:prompt:0,w1004:prompt:0" {
		t.Errorf("q=turn 1, limit 5: %q, want w1000 … w1004", ids)
	}
	// "turn 1" is in turns 1, 10-19, 100-199 and 1000-1004: 116.
	if !strings.Contains(page, `<p class="earlier">111 earlier turns are hidden. <a href="/threads/th-w?limit=116&amp;q=turn&#43;1">Show 111 earlier turns</a></p>`) {
		t.Errorf("earlier link lacks the filter:\n%s", page[strings.Index(page, `<p class="thread-tools">`):strings.Index(page, `<section`)])
	}

	var body struct {
		Thread struct {
			Title string `json:"title"`
			Turns uint64 `json:"turns"`
		} `json:"thread"`
		Turns  []store.Turn `json:"turns"`
		Total  int          `json:"total"`
		Hidden int          `json:"hidden"`
		Limit  int          `json:"limit"`
	}
	getJSON(t, h, "/api/threads/th-w/turns?limit=3", http.StatusOK, &body)
	if len(body.Turns) != 3 || body.Turns[2].TurnID != "w1004:prompt:0" || body.Total != n || body.Hidden != n-3 || body.Limit != 3 ||
		body.Thread.Turns != n || body.Thread.Title != "turn 0" {
		t.Errorf("limit=3: %d turns (last %v), total %d, hidden %d, limit %d, thread %+v; want the 3 newest of %d",
			len(body.Turns), body.Turns[len(body.Turns)-1].TurnID, body.Total, body.Hidden, body.Limit, body.Thread, n)
	}
	getJSON(t, h, "/api/threads/th-w/turns", http.StatusOK, &body)
	if len(body.Turns) != 1000 || body.Hidden != 5 {
		t.Errorf("default window: %d turns, %d hidden; want 1000 and 5", len(body.Turns), body.Hidden)
	}
}

// The whole thread as markdown honours the filters.
func TestThreadMarkdownAPI(t *testing.T) {
	h, _ := filterFixture(t)
	res := get(t, h, "/api/threads/th-f/markdown?phase=review")
	want := "# plan the launch\n\n" +
		"### reviewer · Review · prompt (claude)\n\n```\nreview it\n```\n\n" +
		"### reviewer · Review · response (claude)\n\n```\nこんにちは世界 looks good\n```\n\n"
	if res.status != http.StatusOK || res.body != want || !strings.HasPrefix(res.header.Get("Content-Type"), "text/markdown") {
		t.Errorf("GET markdown?phase=review: status %d, %s\n got %q\nwant %q", res.status, res.header.Get("Content-Type"), res.body, want)
	}
	res = get(t, h, "/api/threads/th-f/turns/f-exec:response:1/markdown")
	if want := "### 한국어봇 · Execute · response (gpt-5)\n\n```\n🚀 launched\n```\n\n"; res.status != http.StatusOK || res.body != want {
		t.Errorf("turn markdown: status %d\n got %q\nwant %q", res.status, res.body, want)
	}
	for _, path := range []string{"/api/threads/th-f/turns/nope/markdown", "/api/threads/nope/markdown"} {
		if res := get(t, h, path); res.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, res.status)
		}
	}
	page := get(t, h, "/threads/th-f?phase=review").body
	if !strings.Contains(page, `<button type="button" class="copy-thread" data-url="/api/threads/th-f/markdown?phase=review">`) {
		t.Error("page's copy-thread button does not carry the filters")
	}
}
