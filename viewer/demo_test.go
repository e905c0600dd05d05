package viewer_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The demo thread renders in a real browser with every phase of the
// pipeline.
func TestDemoThreadInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, thread := demoServer(t)
	if res := get(t, h, "/threads/"+thread); res.status != http.StatusOK {
		t.Fatalf("GET demo thread: status %d", res.status)
	}
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/"+thread), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	headings, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.phase h2")].map(h => h.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// The demo's critiques and adjudication are part of its plan phase.
	if got, want := strings.Join(headings, ","), "Plan,Review,Execute,Verify,Revision"; got != want {
		t.Errorf("phase headings %q, want %q", got, want)
	}
	// Every phase has a cost row, the reviewer's calls that report no
	// usage included, in the page's phase order.
	costPhases, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".thread-cost tbody tr td:first-child")].map(td => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(costPhases, ","), "plan,review,execute,verify,revision"; strings.ToLower(got) != want {
		t.Errorf("cost-by-phase rows %q, want %q", got, want)
	}
	testkit.Screenshot(ctx, t, "demo-thread")
}
