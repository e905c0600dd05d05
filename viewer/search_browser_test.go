package viewer_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// In a real browser, the search page finds a Korean phrase of the demo run
// and its result opens the turn in its thread.
func TestDemoSearchInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, thread := demoServer(t)
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/search"),
		chromedp.SendKeys(chromedp.CSS(`#search-form input[name="q"]`), "좋습니다"),
		chromedp.Submit(chromedp.CSS(`#search-form input[name="q"]`)),
		chromedp.WaitVisible(chromedp.CSS("li.result mark"))); err != nil {
		t.Fatal(err)
	}
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("li.result mark")].map(m => m.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) == 0 || marks[0] != "좋습니다" {
		t.Errorf("marked matches %q, want 좋습니다", marks)
	}
	testkit.Screenshot(ctx, t, "search-korean")

	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("li.result a.result-link").getAttribute("href")`))
	if err != nil {
		t.Fatal(err)
	}
	turnID, ok := strings.CutPrefix(href, "/threads/"+thread+"#")
	if !ok {
		t.Fatalf("result links to %q, want a turn of thread %s", href, thread)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("li.result a.result-link")),
		chromedp.WaitVisible(chromedp.CSS("article.turn:target"))); err != nil {
		t.Fatal(err)
	}
	target, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[location.pathname, document.querySelector("article.turn:target").id,
		document.querySelector("article.turn:target").textContent]`))
	if err != nil {
		t.Fatal(err)
	}
	if target[0] != "/threads/"+url.PathEscape(thread) || target[1] != turnID || !strings.Contains(target[2], "좋습니다") {
		t.Errorf("opened %q, turn %q; want thread %s, turn %s holding 좋습니다", target[0], target[1], thread, turnID)
	}
	testkit.Screenshot(ctx, t, "search-opened-turn")
}
