package viewer_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

const (
	xssScript = `<script>alert(1)</script>`
	xssImg    = `<img src=x onerror=alert(1)>`
)

// numbered returns n lines "line 1" … "line n".
func numbered(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	return strings.Join(lines, "\n")
}

// pageFixture records one pipeline run whose phases were written out of
// canonical order, with a custom phase, two plan rounds, a failed call, a
// call still running, a duplicate delivery and hostile content.
func pageFixture(t *testing.T) http.Handler {
	h, conn := newServer(t)
	const th = "th-page"
	var turns []schema.Turn
	add := func(ts ...schema.Turn) { turns = append(turns, ts...) }

	dp, dr := call(th, "s-deploy", "deploy", 0, "shipper", "openai", "gpt-5", 10, "deploy it", "deployed")
	ep, er := call(th, "s-exec", "Execute", 0, "worker", "openai", "gpt-5", 20, "run the plan", numbered(40))
	// er: tokens and cost unknown.
	pp1, pr1 := call(th, "s-plan1", "plan", 1, "planner", "anthropic", "claude", 30, "make a plan", numbered(30))
	pr1.TokensIn, pr1.TokensOut, pr1.TokensCacheRead, pr1.CostUSD = u32(1200), u32(345), u32(1000), f64(0.0042)
	pp2, pr2 := call(th, "s-plan2", "Plan", 2, "planner", "anthropic", "claude", 40, "revise the plan", "plan v2")
	// The review prompt is messages JSON, whose encoder escapes < as
	// \u003c: the page decodes it, and must escape it again.
	msgs, _ := json.Marshal([]map[string]string{
		{"role": "system", "content": "be strict " + xssScript},
		{"role": "user", "content": "review: " + xssImg},
	})
	rp, rr := call(th, "s-review", "REVIEW", 0, "reviewer", "openai", "gpt-5", 50, string(msgs), "looks fine "+xssImg)
	rr.Speaker, rr.Model = "rev"+xssScript, "model"+xssImg
	cp, cr := call(th, "s-crit", "critique", 0, "critic", "gemini", "gemini-pro", 60, "critique the plan", "too vague")
	cp.ParentTurnID, cr.ParentTurnID = pr1.TurnID, pr1.TurnID
	vp, _ := call(th, "s-verify", "verify", 0, "verifier", "openai", "gpt-5", 70, "verify the result", "")
	verr := vp
	verr.TurnID, verr.Role, verr.Seq, verr.StartNS = schema.ResponseTurnID("s-verify", true), schema.RoleError, 1, at(75)
	verr.Status, verr.Error, verr.Content, verr.DurationNS = schema.StatusError, "rate limited: 429 "+xssScript, "rate limited: 429 "+xssScript, 5e9
	ap, _ := call(th, "s-adj", "adjudicate", 0, "judge", "anthropic", "claude", 80, "which plan wins?", "")

	add(dp, dr, ep, er, pp1, pr1, pp2, pr2, rp, rr, cp, cr, vp, verr, beating(ap))
	testkit.InsertTurns(t, conn, turns...)
	testkit.InsertTurns(t, conn, pr1, rr) // delivered again
	return h
}

func TestThreadPagePhaseOrder(t *testing.T) {
	h := pageFixture(t)
	res := get(t, h, "/threads/th-page")
	if res.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", res.status, res.body)
	}
	page := res.body

	var headings []string
	for _, m := range regexp.MustCompile(`<h2>(.*?)</h2>`).FindAllStringSubmatch(page, -1) {
		headings = append(headings, m[1])
	}
	want := []string{"Plan", "Review", "Execute", "Verify", "Critique", "Adjudicate", "deploy"}
	if strings.Join(headings, ",") != strings.Join(want, ",") {
		t.Errorf("phase headings %q, want %q", headings, want)
	}

	// Only Plan has two rounds, so only it has round headings, in order;
	// "plan" and "Plan" are one phase.
	rounds := regexp.MustCompile(`<h3>(.*?)</h3>`).FindAllStringSubmatch(page, -1)
	if len(rounds) != 2 || rounds[0][1] != "Round 1" || rounds[1][1] != "Round 2" {
		t.Errorf("round headings %q, want Round 1, Round 2", rounds)
	}
	plan := page[strings.Index(page, "<h2>Plan</h2>"):strings.Index(page, "<h2>Review</h2>")]
	for _, id := range []string{"s-plan1:prompt:0", "s-plan1:response:1", "s-plan2:prompt:0", "s-plan2:response:1"} {
		if !strings.Contains(plan, `id="`+id+`"`) {
			t.Errorf("Plan section lacks turn %s", id)
		}
	}
	if strings.Index(plan, "<h3>Round 2</h3>") < strings.Index(plan, `id="s-plan1:response:1"`) {
		t.Errorf("round 1's turns do not precede the Round 2 heading:\n%s", plan)
	}
}

func TestThreadPageTurns(t *testing.T) {
	h := pageFixture(t)
	page := get(t, h, "/threads/th-page").body

	tests := []struct {
		name, turn string
		call       bool     // look in the call's card, not the turn's
		want       []string // substrings of the turn's card
		wantNot    []string
	}{
		{
			name: "known tokens, cache read and cost in the call's header", turn: "s-plan1:response:1", call: true,
			want: []string{
				`<span class="tokens-in">1,200</span>`, `<span class="tokens-out">345</span>`,
				`1,000 read from cache`, `<span class="cost">$0.0042</span>`,
				`<span class="duration">1s</span>`, `<span class="badge speaker prov-1">planner</span>`,
				`<span class="pill phase">plan</span>`, `<span class="badge model">claude</span>`,
				`id="s-plan1:prompt:0"`, `<a class="trace" href="/traces/`,
			},
			wantNot: []string{"running", "Show full", `id="s-plan2`},
		},
		{
			name: "unknown tokens and cost are left out", turn: "s-exec:response:1", call: true,
			wantNot: []string{"tokens-in", `class="cost"`, "cache"},
		},
		{
			name: "a turn's bar has no usage", turn: "s-plan1:prompt:0",
			wantNot: []string{"tokens", "cost", "—"},
		},
		{
			name: "content beyond 30 lines shows its start, the rest on demand", turn: "s-exec:response:1",
			want: []string{`<div class="content" id="content-s-exec:response:1">` + "\n<pre>\nline 1\n", "line 30\n…</pre>",
				`<button type="button" class="load-full show-full" aria-controls="content-s-exec:response:1">Show full (`},
			wantNot: []string{"line 31"},
		},
		{
			name: "30 lines stay open", turn: "s-plan1:response:1",
			want:    []string{`<div class="content" id="content-s-plan1:response:1">` + "\n<pre>\nline 1\n", "line 30</pre>"},
			wantNot: []string{"load-full", "…"},
		},
		{
			name: "error turn with its message", turn: "s-verify:error:1",
			want:    []string{`<article class="turn turn-error"`, `<p class="error-msg">rate limited: 429 &lt;script&gt;alert(1)&lt;/script&gt;</p>`},
			wantNot: []string{`<div class="content`}, // the message is the content: shown once
		},
		{
			name: "a failed call's card", turn: "s-verify:error:1", call: true,
			want:    []string{`<article class="call call-llm call-error"`, `<span class="pill failed">error</span>`},
			wantNot: []string{"running"},
		},
		{
			name: "call still running", turn: "s-adj:prompt:0", call: true,
			want: []string{`<article class="turn turn-running"`, `<span class="pill running">running</span>`, "which plan wins?",
				`<article class="call call-llm call-running"`},
		},
		{
			name: "finished prompt is not running", turn: "s-plan2:prompt:0", call: true,
			wantNot: []string{"running"},
		},
		{
			name: "parent threading", turn: "s-crit:response:1", call: true,
			want: []string{`<p class="parent">↳ critiques <a href="#call-s-plan1">planner · plan · response</a></p>`},
		},
		{
			name: "hostile content, speaker and model are escaped", turn: "s-review:response:1", call: true,
			want: []string{
				"looks fine &lt;img src=x onerror=alert(1)&gt;",
				`<span class="badge model">model&lt;img src=x onerror=alert(1)&gt;</span>`,
			},
		},
		{
			name: "messages JSON shows as messages, escaped, the system prompt folded", turn: "s-review:prompt:0",
			want: []string{
				`<details class="msg msg-system"><summary class="msg-role">system</summary>` + "\n<pre>\nbe strict &lt;script&gt;alert(1)&lt;/script&gt;</pre></details>",
				`<span class="msg-role">user</span>` + "\n<pre>\nreview: &lt;img src=x onerror=alert(1)&gt;</pre>",
			},
			wantNot: []string{`&#34;role&#34;`}, // not the JSON
		},
	}
	for _, tt := range tests {
		card := article(t, page, tt.turn)
		if tt.call {
			card = callCard(t, page, tt.turn)
		}
		for _, w := range tt.want {
			if !strings.Contains(card, w) {
				t.Errorf("%s: card %s lacks %q:\n%s", tt.name, tt.turn, w, card)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(card, w) {
				t.Errorf("%s: card %s has %q:\n%s", tt.name, tt.turn, w, card)
			}
		}
	}
	// The call's speaker is its first turn's: the review prompt's.
	if card := callCard(t, page, "s-review:response:1"); !strings.Contains(card, `<span class="badge speaker prov-0">reviewer</span>`) {
		t.Errorf("review call's speaker:\n%s", card)
	}

	for _, raw := range []string{xssScript, xssImg, "<b>"} {
		if strings.Contains(page, raw) {
			t.Errorf("page contains unescaped %q", raw)
		}
	}
	// Each turn once, duplicates delivered or not; 15 turns in all.
	for _, id := range []string{"s-plan1:response:1", "s-review:response:1"} {
		if n := strings.Count(page, `id="`+id+`"`); n != 1 {
			t.Errorf("turn %s appears %d times, want once", id, n)
		}
	}
	if n := strings.Count(page, `<article class="turn`); n != 15 {
		t.Errorf("page has %d turn cards, want 15", n)
	}
	if n := strings.Count(page, `<article class="call`); n != 8 {
		t.Errorf("page has %d call cards, want 8", n)
	}
	if !strings.Contains(page, `<span class="pill running">1 running</span>`) || !strings.Contains(page, `<span class="pill failed">1 failed</span>`) {
		t.Errorf("thread summary lacks 1 running and 1 failed")
	}
}

func TestThreadPageHeaders(t *testing.T) {
	h := pageFixture(t)
	for _, path := range []string{"/", "/threads/th-page", "/threads/nope"} {
		res := get(t, h, path)
		csp := res.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: Content-Security-Policy %q, want script-src 'self' under default-src 'none'", path, csp)
		}
		if ct := res.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		if strings.Contains(res.body, "<script>") || strings.Contains(res.body, "style=") {
			t.Errorf("GET %s: inline script or style, which the policy blocks", path)
		}
	}
}

func TestStaticFiles(t *testing.T) {
	h, _ := newServer(t)
	tests := []struct{ path, contentType, want string }{
		{"/static/app.css", "text/css", ".content.collapsed"},
		{"/static/app.js", "text/javascript", "window.convtrace"},
		{"/static/thread.js", "text/javascript", "load-full"},
	}
	for _, tt := range tests {
		res := get(t, h, tt.path)
		if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), tt.contentType) || !strings.Contains(res.body, tt.want) {
			t.Errorf("GET %s: status %d, Content-Type %q, body has %q: %v", tt.path, res.status, res.header.Get("Content-Type"), tt.want, strings.Contains(res.body, tt.want))
		}
	}
	if res := get(t, h, "/static/"); res.status != http.StatusNotFound {
		t.Errorf("GET /static/: status %d, want 404 (no listing)", res.status)
	}
	// A browser that has the file revalidates it: 304, no body.
	tag := get(t, h, "/static/app.js").header.Get("ETag")
	if tag == "" {
		t.Fatal("GET /static/app.js: no ETag")
	}
	req := newRequest(http.MethodGet, "/static/app.js", nil)
	req.Header.Set("If-None-Match", tag)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("GET /static/app.js with If-None-Match %s: status %d, %d bytes; want 304 and none", tag, rec.Code, rec.Body.Len())
	}
}

func TestNotFound(t *testing.T) {
	h, _ := newServer(t)
	tests := []struct {
		path        string
		contentType string
		want        string
	}{
		{"/threads/no-such-thread", "text/html", "No thread has the id no-such-thread."},
		{"/threads/" + "%3Cscript%3E", "text/html", "No thread has the id &lt;script&gt;."},
		{"/nowhere", "text/html", "There is no page here."},
		{"/api/threads/no-such-thread/turns", "application/json", `{"error":"thread not found"}`},
		{"/api/nowhere", "application/json", `{"error":"not found"}`},
	}
	for _, tt := range tests {
		res := get(t, h, tt.path)
		if res.status != http.StatusNotFound || !strings.HasPrefix(res.header.Get("Content-Type"), tt.contentType) || !strings.Contains(res.body, tt.want) {
			t.Errorf("GET %s: status %d, Content-Type %q; want 404 %s containing %q:\n%s",
				tt.path, res.status, res.header.Get("Content-Type"), tt.contentType, tt.want, res.body)
		}
	}
}

// Model output, names and the user's memo are text, never markup or a
// link target, wherever the page shows them.
func TestThreadPageEscaping(t *testing.T) {
	h, conn := newServer(t)
	hostile := xssScript + xssImg + xssHref
	p, r := call("th-x", "x1", "plan", 0, "sp"+hostile, "openai", "m"+hostile, 10, hostile, hostile)
	p.TraceID, r.TraceID = xssHref, xssHref
	tc := r
	tc.TurnID, tc.Role, tc.Seq, tc.ToolName, tc.ToolCallID, tc.StartNS = "x1:tool_call:2", schema.RoleToolCall, 2, "tool"+hostile, "c1", at(12)
	testkit.InsertTurns(t, conn, p, r, tc)
	if res := put(t, h, "/api/threads/th-x/turns/"+r.TurnID+"/note", `{"memo": "`+strings.ReplaceAll(hostile, `"`, `\"`)+`"}`); res.status != http.StatusOK {
		t.Fatalf("PUT memo: status %d: %s", res.status, res.body)
	}
	for _, path := range []string{"/threads/th-x", "/threads/th-x?q=" + url.QueryEscape("<script>"), "/threads/th-x?speaker=" + url.QueryEscape("sp"+hostile)} {
		res := get(t, h, path)
		if res.status != http.StatusOK {
			t.Fatalf("GET %s: status %d, want 200", path, res.status)
		}
		assertProbesEscaped(t, "GET "+path, res)
	}
	page := get(t, h, "/threads/th-x?q="+url.QueryEscape("<script>")).body
	card := callCard(t, page, r.TurnID)
	for _, want := range []string{
		`<mark>&lt;script&gt;</mark>alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;javascript:alert(1)`,
		`<p class="memo">&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;javascript:alert(1)</p>`,
		`<span class="badge model">m&lt;script&gt;`,
		`href="/traces/javascript:alert%281%29?span=x1"`,
	} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	if card := callCard(t, page, tc.TurnID); !strings.Contains(card, `<span class="tool">tool&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;javascript:alert(1)</span>`) {
		t.Errorf("tool name not escaped:\n%s", card)
	}
}

// A chat prompt that repeats the thread's history shows only what is new;
// the history is one click away.
func TestThreadHistoryDedup(t *testing.T) {
	h, conn := newServer(t)
	msgs := func(ms ...string) string {
		var out []map[string]string
		for i := 0; i < len(ms); i += 2 {
			out = append(out, map[string]string{"role": ms[i], "content": ms[i+1]})
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	p1, r1 := call("th-h", "h1", "plan", 0, "planner", "openai", "gpt-5", 10, msgs("system", "be brief", "user", "plan it"), "the plan")
	p2, r2 := call("th-h", "h2", "plan", 0, "planner", "openai", "gpt-5", 20,
		msgs("system", "be brief", "user", "plan it", "assistant", "the plan", "user", "shorter"), "short plan")
	testkit.InsertTurns(t, conn, p1, r1, p2, r2)

	page := get(t, h, "/threads/th-h").body
	first := article(t, page, p1.TurnID)
	if strings.Contains(first, "earlier messages") || !strings.Contains(first, "be brief") {
		t.Errorf("first prompt hides history it is the first to show:\n%s", first)
	}
	second := article(t, page, p2.TurnID)
	if !strings.Contains(second, `aria-controls="content-h2:prompt:0">3 earlier messages</button>`) {
		t.Errorf("second prompt does not offer its 3 earlier messages:\n%s", second)
	}
	if !strings.Contains(second, "shorter") || strings.Contains(second, "be brief") {
		t.Errorf("second prompt's card is not only its new message:\n%s", second)
	}
	// The whole prompt, earlier messages included, is one request away.
	full := get(t, h, "/threads/th-h/turns/"+url.PathEscape(p2.TurnID)+"/full").body
	for _, want := range []string{"be brief", "plan it", "the plan", "shorter"} {
		if !strings.Contains(full, want) {
			t.Errorf("the whole prompt lacks %q:\n%s", want, full)
		}
	}
	// Filtered to the second call alone, nothing earlier is on the page.
	if card := article(t, get(t, h, "/threads/th-h?from=2026-05-01T09:00:15Z").body, p2.TurnID); strings.Contains(card, "earlier messages") {
		t.Errorf("history hidden though the page does not show it:\n%s", card)
	}
}
