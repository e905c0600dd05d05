package viewer_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The demo's trace draws as a waterfall in a real browser, spans coloured
// by phase; clicking a span opens its detail beside the waterfall without
// leaving the page, Escape closes it, and the URL reopens it on reload.
func TestDemoTraceInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn, thread := demoServer(t)
	// The demo runs under one root span: its calls share one trace.
	var traces uint64
	var traceID string
	if err := conn.QueryRow(context.Background(), "SELECT uniqExact(trace_id), any(trace_id) FROM conversations WHERE thread_id = ?", thread).Scan(&traces, &traceID); err != nil {
		t.Fatal(err)
	}
	if traces != 1 {
		t.Fatalf("demo thread spans %d traces, want 1", traces)
	}
	if res := get(t, h, "/traces/"+traceID); res.status != http.StatusOK {
		t.Fatalf("GET demo trace: status %d", res.status)
	}
	_, tool := demoSpan(t, conn, "name = 'execute_tool read_file'")
	_, llm := demoSpan(t, conn, "name = 'chat claude-sonnet-4-5' AND phase = 'plan'")
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/traces/"+traceID), chromedp.WaitVisible(chromedp.CSS("rect.wf-bar"))); err != nil {
		t.Fatal(err)
	}
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("rect.wf-bar")].map(r => r.getBoundingClientRect().width)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(widths) < 2 {
		t.Fatalf("%d bars, want the demo's spans", len(widths))
	}
	for i, w := range widths {
		if w <= 0 {
			t.Errorf("bar %d is %v px wide, want more than 0", i, w)
		}
	}
	// Nesting is visible: a child's label starts right of its root's.
	indents, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[".depth-0 .span-name", ".depth-1 .span-name"].map(s => {
		const e = document.querySelector(s); return e ? e.getBoundingClientRect().left : -1 })`))
	if err != nil {
		t.Fatal(err)
	}
	if indents[0] < 0 || indents[1] <= indents[0] {
		t.Errorf("label left edges at depth 0 and 1: %v, want depth 1 further right", indents)
	}

	// Every span carries its phase's colour class; plan and execute bars
	// differ; the legend names the phases.
	colours, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
		const rows = [...document.querySelectorAll("a.wf-row.span")];
		const fill = (sel) => { const r = document.querySelector(sel + " rect.wf-bar"); return r ? getComputedStyle(r).fill : ""; };
		return {
			unclassed: rows.filter(r => ![...r.classList].some(c => c.startsWith("ph-"))).length,
			plan: fill("a.wf-row.ph-0"), execute: fill("a.wf-row.ph-2:not(.span-error)"),
			legend: [...document.querySelectorAll(".phase-legend li")].map(li => li.textContent).join(","),
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if colours["unclassed"].(float64) != 0 || colours["plan"] == "" || colours["plan"] == colours["execute"] ||
		!strings.HasPrefix(colours["legend"].(string), "Plan,Review,Execute,Verify,Revision") {
		t.Errorf("phase colours: %v; want every span classed, plan and execute bars in different colours, a legend in phase order", colours)
	}
	testkit.Screenshot(ctx, t, "demo-trace")

	// A click on a tool span opens its detail beside the waterfall, in
	// place: the document is the same one.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.stayedOnPage = 1`)); err != nil {
		t.Fatal(err)
	}
	pane := `#detail-pane article.detail[data-detail-span="` + tool + `"]`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a.wf-row[data-span="`+tool+`"] .span-name`)), chromedp.WaitVisible(chromedp.CSS(pane))); err != nil {
		t.Fatal(err)
	}
	opened, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
		const p = document.getElementById("detail-pane").getBoundingClientRect();
		const w = document.getElementById("waterfall").getBoundingClientRect();
		return {
			stayed: window.stayedOnPage === 1, navigations: performance.getEntriesByType("navigation").length,
			search: location.search, current: [...document.querySelectorAll('a.wf-row[aria-current="true"]')].map(a => a.dataset.span).join(","),
			beside: p.left >= w.right - 1 && p.top < w.bottom,
			text: document.getElementById("detail-pane").textContent,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if opened["stayed"] != true || opened["navigations"].(float64) != 1 || opened["search"] != "?span="+tool || opened["current"] != tool || opened["beside"] != true {
		t.Errorf("after a click on span %s: %v; want the same document, ?span= in the URL, the row current, the pane beside the waterfall", tool, opened)
	}
	for _, want := range []string{"gen_ai.tool.name", "read_file", "gen_ai.prompt", "gen_ai.response", "execute plan"} {
		if !strings.Contains(opened["text"].(string), want) {
			t.Errorf("pane text lacks %q", want)
		}
	}
	testkit.Screenshot(ctx, t, "demo-trace-detail")

	// Escape closes it and takes the span out of the URL.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(chromedp.CSS("#detail-pane"))); err != nil {
		t.Fatal(err)
	}
	closed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search + "|" + document.querySelectorAll('[aria-current="true"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if closed != "|0" {
		t.Errorf("after Escape: search and current rows %q, want none", closed)
	}

	// Enter on a focused span opens it too; a reload of the URL reopens it,
	// rendered by the server.
	row := `a.wf-row[data-span="` + llm + `"]`
	pane = `#detail-pane article.detail[data-detail-span="` + llm + `"]`
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(row)), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(pane))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(pane+" .detail-input"))); err != nil {
		t.Fatal(err)
	}
	reloaded, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search + "|" + document.querySelector('a.wf-row[aria-current="true"]').dataset.span`))
	if err != nil {
		t.Fatal(err)
	}
	if reloaded != "?span="+llm+"|"+llm {
		t.Errorf("after reload: %q, want ?span=%s with its row current", reloaded, llm)
	}
	testkit.Screenshot(ctx, t, "demo-trace-detail-reloaded")

	// Another page (one with no pane of its own) opens the same fragment
	// from #detail= in a pane floating at the right; Escape closes it and
	// clears the hash. An unknown span shows the server's reason.
	fragment := "/traces/" + traceID + "/spans/" + tool + "/detail"
	floating := `#detail-pane.detail-floating article.detail[data-detail-span="` + tool + `"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/"+thread+"#detail="+url.QueryEscape(fragment)), chromedp.WaitVisible(chromedp.CSS(floating))); err != nil {
		t.Fatal(err)
	}
	testkit.Screenshot(ctx, t, "demo-thread-detail-floating")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(chromedp.CSS("#detail-pane"))); err != nil {
		t.Fatal(err)
	}
	if hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || hash != "" {
		t.Errorf("hash after Escape = %q (%v), want none", hash, err)
	}
	missing := "/traces/" + traceID + "/spans/nope/detail"
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/"+thread+"#detail="+url.QueryEscape(missing)), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#detail-pane .error-msg"))); err != nil {
		t.Fatal(err)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#detail-pane .error-msg").textContent`)); err != nil || !strings.Contains(msg, `has no span "nope"`) {
		t.Errorf("unknown span's pane says %q (%v), want the server's reason", msg, err)
	}

	// At 390 px the page does not scroll sideways, the pane open below the
	// waterfall or not.
	for _, tc := range []struct{ name, path string }{
		{"demo-trace-390", "/traces/" + traceID},
		{"demo-trace-detail-390", "/traces/" + traceID + "?span=" + llm},
	} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+tc.path), chromedp.WaitVisible(chromedp.CSS("rect.wf-bar"))); err != nil {
			t.Fatal(err)
		}
		layout, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(() => {
			const p = document.getElementById("detail-pane"), w = document.getElementById("waterfall").getBoundingClientRect();
			return { scroll: document.documentElement.scrollWidth, below: p.hidden ? 1 : (p.getBoundingClientRect().top >= w.bottom ? 1 : 0) };
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if layout["scroll"] > 390 || layout["below"] != 1 {
			t.Errorf("%s at 390 px: scroll width %v, pane below the waterfall %v; want ≤ 390 and below", tc.path, layout["scroll"], layout["below"])
		}
		testkit.Screenshot(ctx, t, tc.name)
	}
}
