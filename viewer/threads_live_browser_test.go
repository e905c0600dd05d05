package viewer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// evaluate runs a script expression in the tab and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// The list's filters in Chromium: the status choice applies on its own,
// the cost bounds through the form, an attribute of a row links to the
// list of its value, and the search finds a thread by an attribute.
func TestThreadsStatusFiltersInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _ := statusFixture(t)
	base := serve(t, h)
	rows := chromedp.CSS("tr.thread-row")
	sorted := `[...document.querySelectorAll("tr.thread-row")].map(r => r.dataset.thread).sort().join(",")`

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`select[name=status]`), "failed")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status filter", `location.search.includes("status=failed") && document.querySelectorAll("tr.thread-row").length === 1`)
	if got := evaluate[string](t, ctx, sorted); got != "fail1" {
		t.Errorf("rows with status failed %q, want fail1", got)
	}
	if pill := evaluate[string](t, ctx, `document.querySelector("tr.thread-row td.status .pill.failed").textContent`); pill != "1 failed" {
		t.Errorf("fail1's pill %q, want 1 failed", pill)
	}
	testkit.Screenshot(ctx, t, "threads-status-failed")

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows),
		chromedp.SetValue(chromedp.CSS(`input[name=min_cost]`), "0.05"),
		chromedp.SetValue(chromedp.CSS(`input[name=max_cost]`), "0.10"),
		chromedp.Click(chromedp.CSS(`form.threads-filters button[type=submit]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the cost bounds", `location.search.includes("max_cost=0.10") && document.querySelectorAll("tr.thread-row").length === 2`)
	if search := evaluate[string](t, ctx, `location.search`); search != "?min_cost=0.05&max_cost=0.10" {
		t.Errorf("URL of the cost bounds %q, want only the filters in use", search)
	}
	if got := evaluate[string](t, ctx, sorted); got != "ok1,task2" {
		t.Errorf("rows costing $0.05 to $0.10 %q, want ok1,task2", got)
	}

	// task1a's attribute links to the threads of its task.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows),
		chromedp.Click(chromedp.CSS(`tr[data-thread="task1a"] a.thread-attr[href*="task"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the task's threads", `location.search.includes("attr.task=T-42") && document.querySelectorAll("tr.thread-row").length === 2`)
	if got := evaluate[string](t, ctx, sorted); got != "task1a,task1b" {
		t.Errorf("rows of task T-42 %q, want task1a,task1b", got)
	}
	if kept := evaluate[string](t, ctx, `document.querySelector('input[name="attr.task"]').value`); kept != "T-42" {
		t.Errorf("the form's task filter %q, want T-42", kept)
	}
	testkit.Screenshot(ctx, t, "threads-task")

	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows),
		chromedp.SetValue(chromedp.CSS(`input[name=q]`), "ops"),
		chromedp.Click(chromedp.CSS(`form.threads-filters button[type=submit]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the search by attribute", `location.search.includes("q=ops") && document.querySelectorAll("tr.thread-row").length === 1`)
	if got := evaluate[string](t, ctx, sorted); got != "task1a" {
		t.Errorf("search ops %q, want task1a (its board)", got)
	}
}

// The list in Chromium while a pipeline runs: a call that starts after the
// page loaded shows as running in its thread's row, then its answer's
// counts, and a new thread appears at the top, all without a navigation
// and with the scroll position kept, from the change feed: the list never
// polls (on the list of running threads, the row of the ended call dims).
// The calls started two minutes ago (their recorders beat), so that once
// they end nothing keeps the list live.
func TestThreadsLiveInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn := newServer(t)
	var turns []schema.Turn
	for i := range 40 {
		id := fmt.Sprintf("old-%02d", i)
		p, r := call(id, id, "plan", 0, "planner", "openai", "gpt-5", i, "an old run", "done")
		turns = append(turns, p, r)
	}
	p, r := call("live1", "live1-a", "plan", 0, "planner", "openai", "gpt-5", 20, "the first step", "ok")
	turns = append(turns, p, r)
	ago := uint64(time.Now().Add(-2 * time.Minute).UnixNano())
	started := func(thread, span string, startNS uint64) (schema.Turn, schema.Turn) {
		p, r := call(thread, span, "build", 0, "builder", "anthropic", "claude", 0, "next step", "built it")
		p.StartNS, r.StartNS = startNS, startNS+uint64(time.Second)
		r.TokensIn, r.TokensOut = u32(1000), u32(200)
		return beating(p), r
	}
	anchorPrompt, anchorResponse := started("anchor", "anchor-a", ago)
	turns = append(turns, anchorPrompt)
	testkit.InsertTurns(t, conn, turns...)
	base := serve(t, h)

	row := func(id string) string { return `document.querySelector('tr.thread-row[data-thread="` + id + `"]')` }
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("tr.thread-row"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live indicator", `!document.querySelector("p.live-indicator").hidden`)
	evaluate[any](t, ctx, `window.scrollTo(0, 300)`)
	scrolled := evaluate[float64](t, ctx, `window.scrollY`)
	if scrolled != 300 {
		t.Fatalf("scrolled to %v, want 300: the page is too short to test the scroll", scrolled)
	}
	navigations := `performance.getEntriesByType("navigation").length`

	livePrompt, liveResponse := started("live1", "live1-b", ago+uint64(time.Second))
	testkit.InsertTurns(t, conn, livePrompt)
	waitFor(t, ctx, "live1 running", row("live1")+`.querySelector(".pill.running") && `+row("live1")+`.querySelector("td.turns").textContent === "3"`)
	testkit.Screenshot(ctx, t, "threads-live-running")
	testkit.InsertTurns(t, conn, liveResponse)
	waitFor(t, ctx, "live1's answer", `!`+row("live1")+`.querySelector(".pill.running") && `+row("live1")+`.querySelector("td.turns").textContent === "4"`)
	if tokens := evaluate[string](t, ctx, row("live1")+`.querySelector("td.tokens").textContent`); tokens != "1,200" {
		t.Errorf("live1's tokens %q, want 1,200 (the new answer's)", tokens)
	}
	if n := evaluate[float64](t, ctx, navigations); n != 1 {
		t.Errorf("%v navigations, want the page loaded once", n)
	}
	if y := evaluate[float64](t, ctx, `window.scrollY`); y != scrolled {
		t.Errorf("scrollY %v after the updates, want %v", y, scrolled)
	}

	freshPrompt, freshResponse := started("fresh1", "fresh1-a", ago+2*uint64(time.Second))
	testkit.InsertTurns(t, conn, freshPrompt, freshResponse)
	waitFor(t, ctx, "the new thread at the top", `document.querySelector("tr.thread-row").dataset.thread === "fresh1"`)
	testkit.Screenshot(ctx, t, "threads-live-new-thread")
	if n := evaluate[float64](t, ctx, navigations); n != 1 {
		t.Errorf("%v navigations after the new thread, want 1", n)
	}

	// The list of running threads; the last running call ends: its row
	// no longer matches and stays dimmed, and the list stops asking.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?status=running"), chromedp.WaitVisible(chromedp.CSS("tr.thread-row"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live indicator", `!document.querySelector("p.live-indicator").hidden`)
	if got := rowIDs(t, ctx); got != "anchor" {
		t.Fatalf("running threads %q, want anchor", got)
	}
	testkit.InsertTurns(t, conn, anchorResponse)
	waitFor(t, ctx, "anchor's row dimmed", row("anchor")+`.classList.contains("unmatched")`)
	polls := `performance.getEntriesByType("resource").filter(e => e.name.includes("/api/threads")).length`
	if n := evaluate[float64](t, ctx, polls); n != 0 {
		t.Errorf("%v requests of /api/threads: want none, the list follows the change feed", n)
	}
}

// The list at 390 px wide: no horizontal scroll of the page; the table
// scrolls inside its own box.
func TestThreadsNarrowInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _ := statusFixture(t)
	base := serve(t, h)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("tr.thread-row")))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Screenshot(ctx, t, "threads-390")
	widths := evaluate[[]float64](t, ctx, `[document.documentElement.scrollWidth, document.querySelector(".table-scroll").scrollWidth, document.querySelector(".table-scroll").clientWidth]`)
	if widths[0] > 390 {
		t.Errorf("the page is %v px wide at 390: it scrolls sideways", widths[0])
	}
	if widths[1] <= widths[2] {
		t.Errorf("the table's box: %v px of content in %v: want the table scrolling inside it", widths[1], widths[2])
	}
	if s := strings.TrimSpace(evaluate[string](t, ctx, `document.querySelector("h1").textContent`)); s != "Threads" {
		t.Errorf("heading %q", s)
	}
}
