package viewer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/convtrace/convtrace/internal/testkit"
)

// rowIDs returns the thread ids of the threads list's rows, in order.
func rowIDs(t *testing.T, ctx context.Context) string {
	t.Helper()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr.thread-row")].map(r => r.dataset.thread)`))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, ",")
}

// waitFor polls a script expression until it is true. A navigation under
// way ends a poll with a DevTools error (-32000: the page or its context
// went away); it then starts again on the new page, until the tab's
// deadline.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	for {
		// Only on a page fully loaded: a condition met while a page is
		// still parsing leaves its nodes to be read before it is laid out.
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.readyState === "complete" && (`+expr+`)`))
		if err == nil {
			return
		}
		if ctx.Err() != nil || !strings.Contains(err.Error(), "(-32000)") {
			t.Fatalf("waiting for %s (%s): %v", what, expr, err)
		}
	}
}

// The threads list in Chromium: the provider filter applies on its own,
// the title search finds a Korean title, a thread renamed on its page keeps
// its name after a reload and in the list, and archiving and restoring
// move it between the lists.
func TestThreadsInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _ := listFixture(t)
	base := serve(t, h)
	rows := chromedp.CSS("tr.thread-row")

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows)); err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, ctx); got != "k1,j1,e1,t1,m1" {
		t.Errorf("list rows %q, want k1,j1,e1,t1,m1", got)
	}
	testkit.Screenshot(ctx, t, "threads-list")

	// Choosing a provider submits the filter form by itself (SetValue
	// fires input and change, as a user's choice does).
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`select[name=provider]`), "ollama")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the provider filter", `location.search.includes("provider=ollama") && document.querySelectorAll("tr.thread-row").length === 1`)
	if got := rowIDs(t, ctx); got != "e1" {
		t.Errorf("rows with provider ollama %q, want e1", got)
	}

	// Title search, Korean, through the form.
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows),
		chromedp.SetValue(chromedp.CSS(`input[name=q]`), "파이프라인"),
		chromedp.Click(chromedp.CSS(`form.threads-filters button[type=submit]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the title search", `location.search.includes("q=") && document.querySelectorAll("tr.thread-row").length === 1`)
	// Read in one script: a node id can go stale if the page is
	// replaced between finding the node and reading it.
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("tr.thread-row a.thread-title").textContent.trim()`))
	if err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, ctx); got != "k1" || title != "데이터 파이프라인 점검" {
		t.Errorf("search 파이프라인: rows %q, title %q; want k1, 데이터 파이프라인 점검", got, title)
	}
	testkit.Screenshot(ctx, t, "threads-search-korean")

	// Rename on the thread page: Escape cancels, Enter saves.
	actions := `div.thread-actions`
	input := chromedp.CSS(actions + ` input[name=title]`)
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/threads/j1"), chromedp.WaitVisible(chromedp.CSS(actions+" button.rename")),
		chromedp.Click(chromedp.CSS(actions+" button.rename")), chromedp.WaitVisible(input),
		chromedp.SendKeys(input, "discarded"), chromedp.SendKeys(input, kb.Escape),
		chromedp.WaitNotVisible(input),
		chromedp.Click(chromedp.CSS(actions+" button.rename")), chromedp.WaitVisible(input),
	)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Screenshot(ctx, t, "thread-rename")
	if err := chromedp.Do(ctx, chromedp.SetValue(input, "새 제목 ✨ plan"), chromedp.SendKeys(input, kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new title", `document.querySelector("h1").textContent === "새 제목 ✨ plan" && document.querySelector("`+actions+` form").hidden`)
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatal(err)
	}
	if h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); err != nil || h1 != "새 제목 ✨ plan" {
		t.Errorf("title after reload %q (%v), want 새 제목 ✨ plan", h1, err)
	}

	// Archive on the page: the list hides it, the archived list shows it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(actions+" button.archive"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the archive", `document.querySelector("`+actions+` button.archive").textContent === "Restore"`)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows)); err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, ctx); got != "k1,e1,t1,m1" {
		t.Errorf("list after archiving j1 %q, want k1,e1,t1,m1", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a.archived-toggle")), chromedp.WaitVisible(chromedp.CSS(`tr.thread-row[data-thread="j1"]`))); err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, ctx); got != "a1,j1" {
		t.Errorf("archived list %q, want a1,j1", got)
	}
	if title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr.thread-row[data-thread="j1"] a.thread-title`))); err != nil || title != "새 제목 ✨ plan" {
		t.Errorf("j1 in the archived list titled %q (%v), want the new title", title, err)
	}
	testkit.Screenshot(ctx, t, "threads-archived")

	// Restore from the archived list's row.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr.thread-row[data-thread="j1"] button.archive`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the restored row to leave", `!document.querySelector('tr.thread-row[data-thread="j1"]')`)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(rows)); err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, ctx); got != "k1,j1,e1,t1,m1" {
		t.Errorf("list after restoring j1 %q, want k1,j1,e1,t1,m1", got)
	}
}
