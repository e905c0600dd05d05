package viewer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The demo's trace draws as a waterfall in a real browser, and clicking a
// provider call shows its turns without leaving the page.
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
	testkit.Screenshot(ctx, t, "demo-trace")

	// Click the first provider call: its turns appear, linking to the thread.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a.wf-row.span:has(.badge.model) .wf-label")),
		chromedp.WaitVisible(chromedp.CSS("#span-turns article.span-turn"))); err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#span-turns a.open-turn")].map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) == 0 || !strings.HasPrefix(links[0], "/threads/"+thread+"#") {
		t.Errorf("turn links %q, want links into thread %s", links, thread)
	}
	selected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("a.wf-row.selected").length`))
	if err != nil {
		t.Fatal(err)
	}
	if selected != 1 {
		t.Errorf("%d selected rows, want 1", selected)
	}
	testkit.Screenshot(ctx, t, "demo-trace-span")
}
