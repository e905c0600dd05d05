package viewer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// The threads list shows Tokens and Cost at every common width, however
// long a thread's preview or title: they stay inside the list's box
// without scrolling it.
func TestThreadsListShowsTokensAndCost(t *testing.T) {
	ctx := browserTab(t)
	h, conn, _ := demoServer(t)
	start := uint64(time.Now().Add(-time.Minute).UnixNano())
	long := strings.Repeat("a question that goes on and on ", 40)
	cost, in, out := 0.25, uint32(1200), uint32(300)
	testkit.InsertTurns(t, conn,
		schema.Turn{TurnID: "s:prompt:0", SpanID: "s", ThreadID: "long-" + strings.Repeat("x", 60), Project: "p", Role: schema.RolePrompt,
			Content: `[{"role":"user","parts":[{"type":"text","content":"` + long + `"}]}]`, StartNS: start},
		schema.Turn{TurnID: "s:response:1", SpanID: "s", ThreadID: "long-" + strings.Repeat("x", 60), Project: "p", Role: schema.RoleResponse,
			Content: "ok", StartNS: start + 1, TokensIn: &in, TokensOut: &out, CostUSD: &cost, CostSource: schema.CostPriced})
	base := serve(t, h)
	for _, width := range []int64{1280, 1600, 2000} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS("table.threads td.cost"))); err != nil {
			t.Fatal(err)
		}
		hidden, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const box = document.querySelector(".table-scroll").getBoundingClientRect();
			const out = [];
			for (const cell of document.querySelectorAll("table.threads td.tokens, table.threads td.cost, table.threads th")) {
				const r = cell.getBoundingClientRect();
				if (r.right > box.right + 1 || r.width === 0) out.push(cell.className + " " + cell.textContent.trim() + " at " + Math.round(r.right) + " of " + Math.round(box.right));
			}
			return out;
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if len(hidden) > 0 {
			t.Errorf("at %d px the threads list hides %d cells past its box: %q", width, len(hidden), hidden[:min(len(hidden), 4)])
		}
	}
}
