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
	// A folded system prompt shows its disclosure marker and says it is
	// folded, not an empty message.
	folded, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("details.msg-system:not([open]) summary")].map(s =>
		getComputedStyle(s).display + " " + s.textContent + getComputedStyle(s, "::after").content)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(folded) == 0 {
		t.Error("the demo thread shows no folded system prompt")
	}
	for _, f := range folded {
		if !strings.HasPrefix(f, "list-item system") || !strings.Contains(f, "folded") {
			t.Errorf("a folded system prompt renders as %q: want its marker (list-item) and a word that it is folded", f)
		}
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
