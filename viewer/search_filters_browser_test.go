package viewer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// searchAndWait marks the page, runs actions that load the next search
// page, and waits for it to be complete.
func searchAndWait(ctx context.Context, t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	evalJS[bool](ctx, t, `document.body.dataset.old = "1"; true`)
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, "the next search page", `document.readyState === "complete" && !document.body.dataset.old && !!document.getElementById("search-form")`)
}

// In a real browser, the search page without a word: a role picked from
// its menu runs the search at once, a tool typed in narrows it, the URL
// carries only the filters in use, the results are every Bash call of the
// demo project newest first over two pages, and the page fits 390 px.
func TestSearchWithoutWordInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn, thread := demoServer(t)
	var turns []schema.Turn
	for i := range 120 {
		p, r := call(thread, fmt.Sprintf("bash-%03d", i), "execute", 0, "claude", "anthropic", "claude-sonnet", 1000+i, "", "ok")
		p.Role, p.TurnID, p.ToolName, p.Content = schema.RoleToolCall, p.SpanID+":tool_call:0", "Bash", fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, i)
		r.Role, r.TurnID, r.ToolName = schema.RoleToolResult, p.SpanID+":tool_result:1", "Bash"
		p.Project, r.Project, p.TraceID, r.TraceID = "demo", "demo", "", ""
		turns = append(turns, p, r)
	}
	testkit.InsertTurns(t, conn, turns...)
	base := serve(t, h)

	searchAndWait(ctx, t, chromedp.Navigate(base+"/search"))
	if n := evalJS[int](ctx, t, `document.querySelectorAll("li.result").length`); n != 0 {
		t.Errorf("search page without word or filter: %d results, want the form alone", n)
	}
	// The role menu runs the search on change.
	searchAndWait(ctx, t, chromedp.Evaluate[chromedp.Void](`(() => {
		const role = document.querySelector('#search-form select[name="role"]');
		role.value = "tool_call";
		role.dispatchEvent(new Event("change"));
	})()`))
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?role=tool_call" {
		t.Errorf("after picking a role: URL query %q, want ?role=tool_call", loc)
	}
	searchAndWait(ctx, t, chromedp.SendKeys(chromedp.CSS(`#search-form input[name="tool"]`), "Bash"),
		chromedp.Click(chromedp.CSS(`#search-form button[type="submit"]`)))
	if loc := evalJS[string](ctx, t, `location.search`); loc != "?role=tool_call&tool=Bash" {
		t.Errorf("after typing a tool: URL query %q, want ?role=tool_call&tool=Bash", loc)
	}
	testkit.Screenshot(ctx, t, "search-without-word")

	// results reads the page's hits: turn id, role, tool and snippet.
	results := func() [][]string {
		return evalJS[[][]string](ctx, t, `[...document.querySelectorAll("li.result")].map(li => [
			li.querySelector("a.result-link").getAttribute("href").split("#")[1],
			li.querySelector(".role").textContent,
			li.querySelector(".badge.tool") ? li.querySelector(".badge.tool").textContent : "",
			li.querySelector(".snippet").textContent])`)
	}
	first := results()
	searchAndWait(ctx, t, chromedp.Click(chromedp.CSS(`nav.pager a.next`)))
	second := results()
	if next := evalJS[int](ctx, t, `document.querySelectorAll("nav.pager a.next").length`); next != 0 {
		t.Errorf("second page has an Older link, want none")
	}
	var ids []string
	for _, r := range append(first, second...) {
		ids = append(ids, r[0])
		if r[1] != schema.RoleToolCall || r[2] != "Bash" || !strings.HasPrefix(r[3], "go test ./pkg") {
			t.Errorf("hit %q: want a Bash tool call showing its command, without its JSON", r)
		}
	}
	var want []string
	for i := 119; i >= 0; i-- {
		want = append(want, fmt.Sprintf("bash-%03d:tool_call:0", i))
	}
	if len(first) != 100 || !slices.Equal(ids, want) {
		t.Errorf("pages of %d and %d hits:\n%q\nwant the 120 Bash calls newest first:\n%q", len(first), len(second), ids, want)
	}

	// At 390 px wide the page scrolls only down.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	searchAndWait(ctx, t, chromedp.Navigate(base+"/search?role=tool_call&tool=Bash&agent=main&status=ok&from=2026-05-01"))
	if w := evalJS[int](ctx, t, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("search page at 390 px: scrollWidth %d, want ≤ 390", w)
	}
	if n := evalJS[int](ctx, t, `document.querySelectorAll("li.result").length`); n != 100 {
		t.Errorf("search page at 390 px: %d results, want a full page", n)
	}
	testkit.Screenshot(ctx, t, "search-without-word-390")
}
