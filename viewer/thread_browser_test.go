package viewer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// waitJS evaluates js until it is true, across page loads (which make
// single evaluations fail); it fails the test when that never happens.
func waitJS(ctx context.Context, t *testing.T, what, js string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	testkit.Screenshot(ctx, t, "thread-timeout")
	t.Fatalf("waiting for %s: %s never became true", what, js)
}

// evalJS evaluates js and fails the test on an error.
func evalJS[T any](ctx context.Context, t *testing.T, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// submitAndWait marks the page, runs the actions that submit a form or
// follow a link, and waits for the next page to be complete.
func submitAndWait(ctx context.Context, t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	evalJS[bool](ctx, t, `document.body.dataset.old = "1"; true`)
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the next page", `document.readyState === "complete" && !document.body.dataset.old && !!document.querySelector("form.thread-filters")`)
}

// The demo thread, and a few turns added to it, in a real browser: phase
// chips and search narrow the turns, Show full expands, copy as markdown
// copies the server's markdown, and star and memo survive a reload.
func TestThreadPageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn, thread := demoServer(t)
	longP, longR := call(thread, "extra-long", "execute", 0, "기록자", "openai", "gpt-5", 10, "write 40 lines", numbered(40))
	koP, koR := call(thread, "extra-ko", "execute", 0, "검토자", "anthropic", "claude", 20, "배포 계획을 검토해 주세요", "결과: 세계 최고\n```\nok\n```")
	huge := strings.Repeat("0123456789abcdef\n", 10_000) + "the end"
	hugeP, hugeR := call(thread, "extra-huge", "execute", 0, "기록자", "openai", "gpt-5", 30, "write 170 kB", huge)
	longP.TraceID, longR.TraceID, koP.TraceID, koR.TraceID = "", "", "", ""
	testkit.InsertTurns(t, conn, longP, longR, koP, koR, hugeP, hugeR)

	base := serve(t, h)
	page := base + "/threads/" + thread
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	// Every turn is on the page, a tool call nested under the answer
	// that asked for it by its anchor alone.
	all := evalJS[int](ctx, t, `document.querySelectorAll("[data-turn]").length`)
	reviews := evalJS[int](ctx, t, `[...document.querySelectorAll("article.call .call-head .pill.phase")].filter(p => p.textContent === "review").length`)
	if all < 10 || reviews == 0 {
		t.Fatalf("demo thread: %d turns, %d review calls; want a full run", all, reviews)
	}
	testkit.Screenshot(ctx, t, "thread-all")

	// The Review chip clicked alone shows only the review turns, with a URL
	// that names that phase and nothing else.
	headings := func() string {
		return evalJS[string](ctx, t, `[...document.querySelectorAll("section.phase h2")].map(h => h.textContent).join(",")`)
	}
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`input[name=phase][value=review]`)))
	if got := evalJS[int](ctx, t, `document.querySelectorAll("article.call").length`); got != reviews {
		t.Errorf("Review chip alone: %d calls, want the %d review calls", got, reviews)
	}
	if h := headings(); h != "Review" {
		t.Errorf("Review chip alone: phase headings %q", h)
	}
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?phase=review" {
		t.Errorf("Review chip alone: URL query %q, want ?phase=review", loc)
	}
	// Shift-click adds Plan; shift-click on Review then takes it away.
	shiftClick := func(phase string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.querySelector("input[name=phase][value=` + phase + `]").dispatchEvent(new MouseEvent("click", {shiftKey: true, bubbles: true, cancelable: true}))`)
	}
	submitAndWait(ctx, t, shiftClick("plan"))
	if h := headings(); h != "Plan,Review" {
		t.Errorf("shift-click on Plan: phase headings %q, want Plan,Review", h)
	}
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?phase=plan&phase=review" {
		t.Errorf("shift-click on Plan: URL query %q", loc)
	}
	submitAndWait(ctx, t, shiftClick("review"))
	if h := headings(); h != "Plan" {
		t.Errorf("shift-click on Review: phase headings %q, want Plan", h)
	}

	// A Korean search keeps the matching turn and marks the match.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	submitAndWait(ctx, t, chromedp.SetValue(chromedp.CSS(`input[name=q]`), "세계"), chromedp.Click(chromedp.CSS(`form.thread-filters button[type=submit]`)))
	if got := evalJS[string](ctx, t, `[...document.querySelectorAll("article.turn")].map(a => a.dataset.turn).join(",")`); got != koR.TurnID {
		t.Errorf("search 세계: turns %q, want %s", got, koR.TurnID)
	}
	if got := evalJS[string](ctx, t, `[...document.querySelectorAll("article.turn mark")].map(m => m.textContent).join(",")`); got != "세계" {
		t.Errorf("search 세계: marks %q, want 세계", got)
	}
	testkit.Screenshot(ctx, t, "thread-search-korean")

	// A long turn shows its start; Show full loads the rest.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	long := `document.querySelector('article[data-turn="` + longR.TurnID + `"] .content')`
	if got := evalJS[string](ctx, t, long+`.textContent`); !strings.Contains(got, "line 30") || strings.Contains(got, "line 31") {
		t.Fatalf("the 40-line turn shows %q, want its first 30 lines", got)
	}
	clickOnCard(ctx, t, `article[data-turn="`+longR.TurnID+`"] button.show-full`)
	waitJS(ctx, t, "the whole 40 lines", long+`.textContent.includes("line 40")`)
	if evalJS[bool](ctx, t, `!!document.querySelector('article[data-turn="`+longR.TurnID+`"] button.show-full')`) {
		t.Error("Show full stays after the whole turn loaded")
	}

	// A turn over 64 KiB arrives cut, and loads whole on request.
	hugeCard := `article[data-turn="` + hugeR.TurnID + `"]`
	if got := evalJS[string](ctx, t, `document.querySelector('`+hugeCard+` .content').textContent`); strings.Contains(got, "the end") || len(got) > 4_000 {
		t.Errorf("the 170 kB turn came whole (%d bytes)", len(got))
	}
	clickOnCard(ctx, t, hugeCard+` button.load-full`)
	waitJS(ctx, t, "the full content", `document.querySelector('`+hugeCard+` .content pre').textContent.endsWith("the end")`)
	if got := evalJS[int](ctx, t, `document.querySelector('`+hugeCard+` .content pre').textContent.length`); got != len(huge) {
		t.Errorf("loaded content: %d characters, want %d", got, len(huge))
	}
	// 10,000 lines make a page too tall for a screenshot: load it afresh.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}

	// Copy as markdown writes the server's markdown of the turn.
	evalJS[bool](ctx, t, `window.copied = null; navigator.clipboard.writeText = async (text) => { window.copied = text; }; true`)
	ko := `article[data-turn="` + koR.TurnID + `"]`
	clickOnCard(ctx, t, ko+` button.copy-turn`)
	waitJS(ctx, t, "the copy", `window.copied !== null`)
	want := "### 검토자 · Execute · response (claude)\n\n````\n결과: 세계 최고\n```\nok\n```\n````\n\n"
	if got := evalJS[string](ctx, t, `window.copied`); got != want {
		t.Errorf("copied turn:\n got %q\nwant %q", got, want)
	}
	waitJS(ctx, t, "Copied", `document.querySelector('`+ko+` .turn-tools .copied').textContent === "Copied"`)
	evalJS[bool](ctx, t, `window.copied = null; true`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.copy-thread`))); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the thread copy", `window.copied !== null`)
	if got := evalJS[string](ctx, t, `window.copied`); !strings.HasPrefix(got, "# ") || !strings.Contains(got, want) || strings.Count(got, "\n### ") != all {
		t.Errorf("copied thread: %d turn headings, has the turn %v; want %d:\n%.300s", strings.Count(got, "\n### "), strings.Contains(got, want), all, got)
	}

	// Star and memo, then a reload rebuilds both from ClickHouse.
	clickOnCard(ctx, t, ko+` button.star`)
	waitJS(ctx, t, "the star", `document.querySelector('`+ko+` button.star').getAttribute("aria-pressed") === "true"`)
	clickOnCard(ctx, t, ko+` button.memo-open`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(ko+` textarea.memo-text`), "다시 볼 것 📌")); err != nil {
		t.Fatal(err)
	}
	clickOnCard(ctx, t, ko+` button.save-memo`)
	waitJS(ctx, t, "the memo", `document.querySelector('`+ko+` .memo-status').textContent === "Saved"`)
	testkit.Screenshot(ctx, t, "thread-star-memo")
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(ko))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](ctx, t, `document.querySelector('`+ko+` button.star').getAttribute("aria-pressed") + " " + document.querySelector('`+ko+` p.memo').textContent`); got != "true 다시 볼 것 📌" {
		t.Errorf("after reload: star and memo %q, want true and the memo", got)
	}
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`input[name=starred]`)))
	if got := evalJS[string](ctx, t, `[...document.querySelectorAll("article.turn")].map(a => a.dataset.turn).join(",")`); got != koR.TurnID {
		t.Errorf("starred only: turns %q, want %s", got, koR.TurnID)
	}
	testkit.Screenshot(ctx, t, "thread-starred")
}
