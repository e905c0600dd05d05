package viewer_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// In a browser, a retried failure is not red: its summary pill and its
// card's pill take another colour than the failure nothing recovered.
func TestRetriedNotRedInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn := costServer(t)
	fp, fr := call("th-r", "s1", "review", 0, "critic", "openai", "gpt-5", 0, "review it", "")
	fr.Role, fr.Status, fr.Error, fr.TurnID = schema.RoleError, schema.StatusError, "429 rate limited", "s1:error:1"
	op, or := call("th-r", "s2", "review", 0, "critic", "openai", "gpt-5", 10, "review it", "looks good")
	xp, xr := call("th-r", "s3", "verify", 0, "checker", "openai", "gpt-5", 20, "verify it", "")
	xr.Role, xr.Status, xr.Error, xr.TurnID = schema.RoleError, schema.StatusError, "500", "s3:error:1"
	testkit.InsertTurns(t, conn, fp, fr, op, or, xp, xr)
	if err := chromedp.Do(ctx, chromedp.Navigate(serve(t, h)+"/threads/th-r"), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
		t.Fatal(err)
	}
	colour := func(sel string) string {
		return evalJS[string](ctx, t, `(() => { const e = document.querySelector(`+"`"+sel+"`"+`); return e ? getComputedStyle(e).color + " " + e.textContent.trim() : "missing"; })()`)
	}
	failed, retried, card := colour(".summary .pill.failed"), colour(".summary .pill.retried"), colour("#call-s1 .pill.retried")
	if failed == "missing" || retried == "missing" || card == "missing" {
		t.Fatalf("pills: failed %q, retried %q, the retried card's %q", failed, retried, card)
	}
	red := failed[:len(failed)-len(" 1 failed")]
	if retried != "rgb(101, 109, 118) 1 retried" || card[:len(card)-len(" error, retried")] == red {
		t.Errorf("pills: failed %q, retried %q, the retried card's %q; want the retried ones grey, not %s", failed, retried, card, red)
	}
	testkit.Screenshot(ctx, t, "thread-retried")
}
