package viewer_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// overlappingLabels lists the pairs of texts of the graph (labels,
// column headings) whose boxes overlap, as drawn.
const overlappingLabels = `(() => {
	const boxes = [...document.querySelectorAll("svg.agent-graph text")].map(e => [e.textContent, e.getBoundingClientRect()]);
	const out = [];
	for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
		const [a, p] = boxes[i], [b, q] = boxes[j];
		if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom) out.push(a + " / " + b);
	}
	return out;
})()`

// The demo's agent graph in a real browser: every speaker is a node,
// clicking one opens the thread filtered by that speaker, and at 390 px
// the page does not scroll sideways (the graph scrolls in its own box).
func TestGraphPageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, thread := demoServer(t)
	base := serve(t, h)
	graph := base + "/threads/" + thread + "/graph"
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(graph),
		chromedp.WaitVisible(chromedp.CSS("svg.agent-graph a.node"))); err != nil {
		t.Fatal(err)
	}
	speakers := evalJS[[]string](ctx, t, `[...document.querySelectorAll("svg.agent-graph a.node-speaker")].map(a => a.dataset.name)`)
	slices.Sort(speakers)
	want := "adjudicator,claude-critic,claude-planner,claude-verifier,codex-critic,codex-executor,codex-planner,reviewer"
	if got := strings.Join(speakers, ","); got != want {
		t.Errorf("speaker nodes %s, want %s", got, want)
	}
	if overlaps := evalJS[[]string](ctx, t, overlappingLabels); len(overlaps) > 0 {
		t.Errorf("overlapping labels: %q", overlaps)
	}
	testkit.Screenshot(ctx, t, "graph-demo")

	// Clicking the reviewer's node opens the thread with its calls only.
	evalJS[bool](ctx, t, `document.body.dataset.old = "1"; true`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`svg.agent-graph a.node[data-name="reviewer"] circle`))); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the thread page", `document.readyState === "complete" && !document.body.dataset.old && !!document.querySelector("article.turn")`)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/threads/"+thread || u.Query().Get("speaker") != "reviewer" {
		t.Errorf("clicking reviewer went to %s, want /threads/%s?speaker=reviewer", loc, thread)
	}
	others := evalJS[int](ctx, t, `[...document.querySelectorAll("article.call .call-head .speaker")].filter(s => s.textContent !== "reviewer").length`)
	if others != 0 {
		t.Errorf("%d calls of the filtered thread page are not the reviewer's", others)
	}

	// At a phone's width the page does not scroll sideways.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(graph),
		chromedp.WaitVisible(chromedp.CSS("svg.agent-graph a.node"))); err != nil {
		t.Fatal(err)
	}
	if w := evalJS[int](ctx, t, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px the page is %d px wide", w)
	}
	if box := evalJS[bool](ctx, t, `(b => b.scrollWidth > b.clientWidth)(document.querySelector(".graph-box"))`); !box {
		t.Errorf("at 390 px the graph does not scroll in its own box")
	}
	testkit.Screenshot(ctx, t, "graph-demo-390")
}

// The graph of a 1,000-turn thread of 20 speakers and 30 tools draws
// every node with no two labels overlapping.
func TestLargeGraphPageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn := newServer(t)
	bigGraphThread(t, conn, "big")
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/threads/big/graph"),
		chromedp.WaitVisible(chromedp.CSS("svg.agent-graph a.node"))); err != nil {
		t.Fatal(err)
	}
	if n := evalJS[int](ctx, t, `document.querySelectorAll("svg.agent-graph a.node").length`); n != 50 {
		t.Errorf("%d nodes drawn, want 50", n)
	}
	if overlaps := evalJS[[]string](ctx, t, overlappingLabels); len(overlaps) > 0 {
		t.Errorf("overlapping labels: %q", overlaps)
	}
	testkit.Screenshot(ctx, t, "graph-large")
}
