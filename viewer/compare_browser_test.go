package viewer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The demo's two plans compared in a real browser: the words only plan A
// says are struck on A's side, plan B's own marked on B's; the form picks
// the revised plan instead, with no script; a pair link leads on; at
// 390 px the sides stack without a horizontal scroll.
func TestComparePageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, thread := demoServer(t)
	find := demoTurns(t, h, thread)
	claudePlan, codexPlan := find("claude-planner", "plan", "response")[0], find("codex-planner", "plan", "response")[0]
	revision := find("claude-planner", "revision", "response")[0]
	base := serve(t, h)

	marks := func(sel string) string {
		return evalJS[string](ctx, t, `[...document.querySelectorAll("`+sel+`")].map(e => e.textContent).join("|")`)
	}
	open := func(url string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(".compare-sides"))); err != nil {
			t.Fatal(err)
		}
	}
	open(base + "/threads/" + thread + "/compare?a=" + claudePlan.SpanID + "&b=" + codexPlan.SpanID)
	if del := marks(".side-A del"); !strings.HasPrefix(del, "A|") || marks(".side-A ins") != "" {
		t.Errorf("side A: deleted %q, want it to start with A; inserted %q, want nothing", del, marks(".side-A ins"))
	}
	if ins := marks(".side-B ins"); !strings.HasPrefix(ins, "B|") || marks(".side-B del") != "" {
		t.Errorf("side B: inserted %q, want it to start with B; deleted %q, want nothing", ins, marks(".side-B del"))
	}
	// Each side shows its own answer whole: its text with the marks.
	if got := evalJS[string](ctx, t, `document.querySelector(".side-A .compare-text").textContent`); got != claudePlan.Content {
		t.Errorf("side A's text %.60q, want the claude-planner's plan", got)
	}
	testkit.Screenshot(ctx, t, "compare-plans")

	// The form, no script involved: B becomes the revised plan.
	evalJS[bool](ctx, t, `document.body.dataset.old = "1"; true`)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`select[name=b]`), revision.SpanID),
		chromedp.Click(chromedp.CSS(`form.compare-pick button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the compare page of the revision", `document.readyState === "complete" && !document.body.dataset.old && !!document.querySelector(".compare-sides")`)
	if q := evalJS[string](ctx, t, `location.search`); q != "?a="+claudePlan.SpanID+"&b="+revision.SpanID {
		t.Errorf("form submitted to %q", q)
	}
	if head := evalJS[string](ctx, t, `document.querySelector(".side-B header").textContent`); !strings.Contains(head, "revision") || !strings.Contains(head, "round 1") {
		t.Errorf("side B's header %q, want the revision in round 1", head)
	}
	if ins := marks(".side-B ins"); !strings.Contains(ins, "revision") {
		t.Errorf("the revised plan's own words %q lack its title's \"revision\"", ins)
	}
	testkit.Screenshot(ctx, t, "compare-revision")

	// The plan's pair links lead on, to the codex-planner's plan.
	evalJS[bool](ctx, t, `document.body.dataset.old = "1"; true`)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll(".compare-pairs a")].find(a => a.textContent === "vs codex-planner, plan r0").click()`)); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the pair's page", `document.readyState === "complete" && !document.body.dataset.old && !!document.querySelector(".compare-sides")`)
	if q := evalJS[string](ctx, t, `location.search`); q != "?a="+claudePlan.SpanID+"&b="+codexPlan.SpanID {
		t.Errorf("pair link went to %q", q)
	}

	narrow(ctx, t)
	open(base + "/threads/" + thread + "/compare?a=" + claudePlan.SpanID + "&b=" + codexPlan.SpanID)
	if w := evalJS[int](ctx, t, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px the page is %d px wide", w)
	}
	if stacked := evalJS[bool](ctx, t, `document.querySelector(".side-B").getBoundingClientRect().top >= document.querySelector(".side-A").getBoundingClientRect().bottom`); !stacked {
		t.Errorf("at 390 px side B is not below side A")
	}
	testkit.Screenshot(ctx, t, "compare-390px")
}

// narrow makes the tab a 390 px wide phone screen.
func narrow(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
}
