package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// The demo thread's two views, its outline, folding and its tool runs, in
// a real browser, and the page at 390 px.
func TestThreadViewsInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, thread := demoServer(t)
	base := serve(t, h)
	page := base + "/threads/" + thread
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
		t.Fatal(err)
	}
	calls := evalJS[int](ctx, t, `document.querySelectorAll("article.call").length`)
	if outline := evalJS[int](ctx, t, `document.querySelectorAll("nav.outline a.outline-call").length`); calls < 10 || outline != calls {
		t.Fatalf("demo thread: %d call cards, %d outline entries; want a full run, one entry a card", calls, outline)
	}

	// A tool run sits under the tool call that asked for it, its result
	// inside, and a patch argument reads as lines of code.
	nested := evalJS[string](ctx, t, `[...document.querySelectorAll(".tool-call .tool-run article.turn")].map(a => a.dataset.role).join(",")`)
	if !strings.Contains(nested, "tool_result") || strings.Contains(nested, "tool_call") {
		t.Errorf("nested tool runs show %q, want their results", nested)
	}
	patch := evalJS[string](ctx, t, `(() => { const c = [...document.querySelectorAll(".tool-call")].find(c => c.querySelector(".tool").textContent === "apply_patch"); return c ? c.querySelector("dl.args dd.code pre").textContent : ""; })()`)
	if !strings.Contains(patch, "\n+++ b/") || strings.Contains(patch, `\n`) {
		t.Errorf("the patch argument is not shown as lines:\n%s", patch)
	}

	// A card's details open in the pane beside the page, without a
	// navigation; its compare button lists its natural partners.
	firstReview := evalJS[string](ctx, t, `[...document.querySelectorAll("article.call")].find(c => c.querySelector(".call-head .speaker").textContent === "reviewer").id`)
	clickOnCard(ctx, t, "#"+firstReview+" button.open-detail")
	waitJS(ctx, t, "the detail pane", `(() => { const p = document.getElementById("detail-pane"); return p && !p.hidden && p.textContent.includes("reviewer"); })()`)
	if n := evalJS[int](ctx, t, `performance.getEntriesByType("navigation").length`); n != 1 {
		t.Errorf("opening the details navigated: %d navigations", n)
	}
	testkit.Screenshot(ctx, t, "thread-detail-pane")
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\u001b")); err != nil { // Escape
		t.Fatal(err)
	}
	clickOnCard(ctx, t, "#"+firstReview+" button.compare-open")
	waitJS(ctx, t, "the natural pairs", `document.querySelectorAll("#`+firstReview+` ul.compare-pairs a[href*='/compare?a=']").length > 0`)
	if got := evalJS[string](ctx, t, `[...document.querySelectorAll("#`+firstReview+` ul.compare-pairs a")].map(a => a.textContent).join(",")`); !strings.Contains(got, "round 1") {
		t.Errorf("the first review's partners %q: want its round 1", got)
	}

	// The outline jumps to a card.
	target := evalJS[string](ctx, t, `document.querySelectorAll("nav.outline a.outline-call")[5].getAttribute("href")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav.outline a.outline-call[href="`+target+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the jump", `location.hash === "`+target+`" && Math.abs(document.querySelector("`+target+`").getBoundingClientRect().top) < 100`)

	// Collapse all leaves the headers; expand all brings the cards back.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.collapse-all`))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](ctx, t, `[document.querySelectorAll("article.call.folded").length, [...document.querySelectorAll("article.call .content")].filter(c => c.offsetParent !== null).length].join(",")`); got != fmt.Sprintf("%d,0", calls) {
		t.Errorf("collapse all: folded cards, visible contents %s; want %d,0", got, calls)
	}
	testkit.Screenshot(ctx, t, "thread-collapsed")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.expand-all`))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[int](ctx, t, `document.querySelectorAll("article.call.folded").length`); got != 0 {
		t.Errorf("expand all left %d cards folded", got)
	}

	// Timeline: every call in start order, the same cards; the revision
	// that came between two review rounds shows between them.
	phaseOrder := evalJS[[]string](ctx, t, `[...document.querySelectorAll("article.call")].map(a => a.id)`)
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`.view-switch a.view-timeline`)))
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?view=timeline" {
		t.Errorf("timeline: URL query %q, want ?view=timeline", loc)
	}
	timeline := evalJS[[]string](ctx, t, `[...document.querySelectorAll("article.call")].map(a => a.id)`)
	if !sameSet(phaseOrder, timeline) || slices.Equal(phaseOrder, timeline) {
		t.Errorf("timeline shows %v; by phase %v: want the same cards in another order", timeline, phaseOrder)
	}
	starts := evalJS[[]float64](ctx, t, `[...document.querySelectorAll("article.call")].map(a => Number(a.dataset.start))`)
	if !slices.IsSorted(starts) {
		t.Errorf("timeline cards are not in start order: %v", starts)
	}
	bands := strings.Join(evalJS[[]string](ctx, t, `[...document.querySelectorAll("section.band")].map(b => b.dataset.phase + b.dataset.round)`), ",")
	if !strings.Contains(bands, "review0,revision1,review1") {
		t.Errorf("timeline bands %s: want review round 0, the revision, then review round 1", bands)
	}
	testkit.Screenshot(ctx, t, "thread-timeline")
	// A filter keeps the view.
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`input[name=phase][value=execute]`)))
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?phase=execute&view=timeline" {
		t.Errorf("execute chip in the timeline: URL query %q", loc)
	}
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`.view-switch a.view-phase`)))
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?phase=execute" {
		t.Errorf("back by phase: URL query %q, want ?phase=execute", loc)
	}

	// At 390 px the page does not scroll sideways.
	noSideScroll(ctx, t, page, "thread-390")
}

// noSideScroll loads url at 390 px wide, checks the page does not scroll
// sideways, takes a screenshot, and restores the width.
func noSideScroll(ctx context.Context, t *testing.T, url, shot string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](ctx, t, `[document.documentElement.scrollWidth, document.documentElement.clientWidth].join(" ")`); got != "390 390" {
		wide := evalJS[string](ctx, t, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > 391).slice(0, 8).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join("; ")`)
		t.Errorf("%s at 390 px: scroll width and width %s, want 390 390; too wide: %s", url, got, wide)
	}
	testkit.Screenshot(ctx, t, shot)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// clickOnCard clicks what sel finds in a card, once the card is in the
// middle of the window. Cards off screen are not laid out
// (content-visibility), so the ones around it take their real height as
// it nears the window, and a click aimed at coordinates computed before
// could land elsewhere: the click is the element's own.
func clickOnCard(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	evalJS[bool](ctx, t, `document.querySelector('`+sel+`').scrollIntoView({block: "center"}); true`)
	waitJS(ctx, t, "the card in view", `(() => { const r = document.querySelector('`+sel+`').getBoundingClientRect(); return r.top > 0 && r.bottom < innerHeight; })()`)
	evalJS[bool](ctx, t, `document.querySelector('`+sel+`').click(); true`)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// The live tail: the page of a thread of a thousand turns being recorded
// receives a call that starts after it loaded, running, then its answer,
// without a reload and with its scroll position kept. It follows the
// change feed: no request for cards until the thread changes.
func TestThreadLiveTailInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn := newServer(t)
	now := uint64(time.Now().UnixNano())
	var turns []schema.Turn
	for i := range 500 {
		p, r := call("th-live", fmt.Sprintf("done-%03d", i), "plan", 0, "planner", "openai", "gpt-5", 0, "plan step", numbered(8))
		p.StartNS, r.StartNS = now-uint64(1000-2*i)*uint64(100*time.Millisecond), now-uint64(999-2*i)*uint64(100*time.Millisecond)
		turns = append(turns, p, r)
	}
	testkit.InsertTurns(t, conn, turns...)
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-live"), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the live mark", `document.querySelector(".live-status").textContent.startsWith("live")`)
	waitJS(ctx, t, "the feed open", `document.documentElement.dataset.feed === "open"`)
	const livePolls = `performance.getEntriesByType("resource").filter(e => e.name.includes("/live?")).length`
	if err := chromedp.Do(ctx, chromedp.Sleep(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := evalJS[int](ctx, t, livePolls); n != 0 {
		t.Errorf("%d requests for cards while nothing changed: want none, the page follows the feed", n)
	}
	// What the reader looks at: the first card below the top of the
	// window, and where it is.
	const inView = `(() => { window.scrollTo(0, 600); const c = [...document.querySelectorAll("article.call")].find(c => c.getBoundingClientRect().top >= 0); return c.id + " " + Math.round(c.getBoundingClientRect().top); })()`
	const stillInView = `(() => { const c = document.getElementById(window.watched); return c.id + " " + Math.round(c.getBoundingClientRect().top); })()`
	seen := evalJS[string](ctx, t, inView)
	evalJS[bool](ctx, t, `window.watched = "`+strings.Fields(seen)[0]+`"; true`)

	p, r := call("th-live", "late", "review", 1, "reviewer", "anthropic", "claude", 0, "review the plan", "approved ✅")
	p.StartNS = uint64(time.Now().UnixNano())
	testkit.InsertTurns(t, conn, p)
	waitJS(ctx, t, "the running card", `!!document.querySelector("#call-late.call-running")`)
	if got := evalJS[string](ctx, t, `document.querySelector("#call-late").closest("section.phase").dataset.phase`); got != "review" {
		t.Errorf("the new call went to phase %q, want a new review section", got)
	}
	// The outline and the summary follow.
	if got := evalJS[string](ctx, t, `[document.querySelector('nav.outline li[data-phase="review"] a.outline-call[href="#call-late"]')?.textContent, document.querySelector(".summary .pill.running")?.textContent].join("|")`); got != "reviewer|1 running" {
		t.Errorf("outline entry and running count %q, want reviewer|1 running", got)
	}
	testkit.Screenshot(ctx, t, "thread-live-running")

	r.StartNS = p.StartNS + uint64(time.Second)
	testkit.InsertTurns(t, conn, r)
	waitJS(ctx, t, "the answer", `!!document.querySelector("#call-late:not(.call-running) article[data-role=response]")`)
	if got := evalJS[string](ctx, t, `document.querySelector("#call-late article[data-role=response] .content").textContent.trim()`); got != "approved ✅" {
		t.Errorf("the answer shows %q", got)
	}
	if n := evalJS[int](ctx, t, `performance.getEntriesByType("navigation").length`); n != 1 {
		t.Errorf("%d navigations: the page reloaded", n)
	}
	if evalJS[bool](ctx, t, `!document.querySelector(".summary .pill.running").hidden`) {
		t.Error("the summary still counts a running call")
	}
	if now := evalJS[string](ctx, t, stillInView); now != seen {
		t.Errorf("the card in view moved: %s, was %s", now, seen)
	}
	if n := evalJS[int](ctx, t, `document.querySelectorAll("article.call").length`); n != 501 {
		t.Errorf("%d cards, want 501", n)
	}
}

// largeThread records a thread of n calls (2n turns), each prompt a chat
// message and each answer of about size bytes.
func largeThread(t testing.TB, conn driver.Conn, thread string, n, size int) {
	t.Helper()
	text := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\n", size/55+1)[:size]
	msgs, _ := json.Marshal([]map[string]string{{"role": "user", "content": text}})
	turns := make([]schema.Turn, 0, 2*n)
	for i := range n {
		phase := []string{"plan", "review", "execute", "verify"}[i*4/n]
		answer := fmt.Sprintf("answer %d: ", i) + text[min(len(text), 12):]
		p, r := call(thread, fmt.Sprintf("%s-%04d", thread, i), phase, uint16(i%3), fmt.Sprintf("agent-%d", i%5), "openai", "gpt-5", i, string(msgs), answer)
		turns = append(turns, p, r)
	}
	for chunk := range slices.Chunk(turns, 200) {
		testkit.InsertTurns(t, conn, chunk...)
	}
}

// A thousand turns of 60 KB each make a page of their starts: the cards,
// the outline and both views work on it, and a card loads whole on demand.
func TestLargeThreadInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn := newServer(t)
	largeThread(t, conn, "th-large", 500, 60<<10)
	res := get(t, h, "/threads/th-large")
	if res.status != http.StatusOK {
		t.Fatalf("status %d", res.status)
	}
	// 60 MB of text make a page of a few MB: each card shows a start.
	if len(res.body) > 4<<20 {
		t.Errorf("the page of 1,000 turns of 60 KB is %d bytes", len(res.body))
	}
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-large"), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
		t.Fatal(err)
	}
	got := evalJS[string](ctx, t, `[document.querySelectorAll("article.call").length, document.querySelectorAll("article.turn").length, document.querySelectorAll("nav.outline a.outline-call").length].join(",")`)
	if got != "500,1000,500" {
		t.Errorf("cards, turns, outline entries: %s; want 500,1000,500", got)
	}
	card := `#call-th-large-0250 article[data-role=response]`
	clickOnCard(ctx, t, card+` button.show-full`)
	waitJS(ctx, t, "the whole answer", `document.querySelector("`+card+` .content pre").textContent.length === `+fmt.Sprint(60<<10))

	// Its details open in the pane, whole.
	clickOnCard(ctx, t, `#call-th-large-0250 button.open-detail`)
	waitJS(ctx, t, "the detail pane", `(() => { const p = document.getElementById("detail-pane"); return p && !p.hidden && p.textContent.includes("answer 250: ") && p.textContent.length > 120000; })()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\u001b")); err != nil {
		t.Fatal(err)
	}
	// Its natural partner in the next round compares word by word.
	clickOnCard(ctx, t, `#call-th-large-0250 button.compare-open`)
	waitJS(ctx, t, "the natural pairs", `!!document.querySelector("#call-th-large-0250 ul.compare-pairs a")`)
	evalJS[bool](ctx, t, `document.querySelector("#call-th-large-0250 ul.compare-pairs a").click(); true`)
	waitJS(ctx, t, "the compare page", `location.pathname.endsWith("/compare") && document.readyState === "complete" && !!document.querySelector("pre.compare-text")`)
	if got := evalJS[string](ctx, t, `[...document.querySelectorAll("pre.compare-text del, pre.compare-text ins")].map(e => e.tagName + ":" + e.textContent).join(",")`); !strings.Contains(got, "DEL:250") {
		t.Errorf("the compare diff of call 250 marks %q, want its number struck", got)
	}
	testkit.Screenshot(ctx, t, "compare-large")
	// The agent graph of the thousand turns: its five agents, each a link.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-large/graph"), chromedp.WaitVisible(chromedp.CSS("svg"))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[int](ctx, t, `[...document.querySelectorAll("svg a")].filter(a => (a.getAttribute("href") || "").includes("speaker=agent-")).length`); got != 5 {
		t.Errorf("the graph of the large thread links %d agents, want 5", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-large"), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
		t.Fatal(err)
	}
	testkit.Screenshot(ctx, t, "thread-large")
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`.view-switch a.view-timeline`)))
	if n := evalJS[int](ctx, t, `document.querySelectorAll("section.band article.call").length`); n != 500 {
		t.Errorf("timeline of the large thread: %d cards", n)
	}
}
