package viewer_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// feedFixture is a viewer whose feed polls every 200 ms over a fresh
// database holding one thread, served with a count of the requests of
// /api/threads; refuseFeed answers /api/events with 503.
func feedFixture(t *testing.T, refuseFeed bool) (base string, polls *atomic.Int64, h http.Handler, conn *topology.Conn) {
	t.Helper()
	c, _ := testkit.Open(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	v := viewer.New(c, viewer.WithLogger(log), viewer.WithChangeFeed(200*time.Millisecond, 0))
	t.Cleanup(func() { _ = v.Shutdown(context.Background()) })
	p, r := call("first", "first-a", "plan", 0, "planner", "openai", "gpt-5", 0, "the first run", "ok")
	testkit.InsertTurns(t, c, p, r)
	polls = new(atomic.Int64)
	h = v.Handler()
	base = serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/api/threads") && req.Method == http.MethodGet {
			polls.Add(1)
		}
		if refuseFeed && req.URL.Path == "/api/events" {
			http.Error(w, "no feed here", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, req)
	}))
	return base, polls, h, c
}

// The threads list in Chromium follows the change feed with polling off:
// a new thread appears at the top, a rename shows, a deleted thread's row
// goes, and no request of /api/threads is made.
func TestThreadsFeedInBrowser(t *testing.T) {
	ctx := browserTab(t)
	base, polls, h, conn := feedFixture(t, false)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("tr.thread-row"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the feed open", `document.documentElement.dataset.feed === "open"`)
	p, r := call("second", "second-a", "plan", 0, "planner", "openai", "gpt-5", 5, "a new run", "ok")
	testkit.InsertTurns(t, conn, p, r)
	waitFor(t, ctx, "the new thread at the top", `document.querySelector("tr.thread-row").dataset.thread === "second"`)
	testkit.Screenshot(ctx, t, "threads-feed-new-thread")

	if res := send(t, h, http.MethodPatch, "/api/threads/first", "application/json", `{"title": "Renamed elsewhere"}`); res.status != http.StatusOK {
		t.Fatalf("rename: %d %s", res.status, res.body)
	}
	waitFor(t, ctx, "the rename", `document.querySelector('tr.thread-row[data-thread="first"] a.thread-title').textContent === "Renamed elsewhere"`)
	if res := send(t, h, http.MethodDelete, "/api/threads/second", "application/json", `{"confirm": "second"}`); res.status != http.StatusOK {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	waitFor(t, ctx, "the deleted row gone", `!document.querySelector('tr.thread-row[data-thread="second"]')`)
	if n := polls.Load(); n != 0 {
		t.Errorf("%d requests of /api/threads: want none, the list follows the change feed", n)
	}
	if n := evaluate[float64](t, ctx, `performance.getEntriesByType("navigation").length`); n != 1 {
		t.Errorf("%v navigations, want the page loaded once", n)
	}
}

// When the feed is refused, a live list polls its JSON twin as before.
func TestThreadsFeedFallbackInBrowser(t *testing.T) {
	ctx := browserTab(t)
	base, polls, _, conn := feedFixture(t, true)
	// A call that ended just now keeps the list live.
	p, r := call("recent", "recent-a", "plan", 0, "planner", "openai", "gpt-5", 0, "just now", "ok")
	p.StartNS, r.StartNS = uint64(time.Now().Add(-time.Second).UnixNano()), uint64(time.Now().UnixNano())
	testkit.InsertTurns(t, conn, p, r)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("tr.thread-row"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the feed failed", `document.documentElement.dataset.feed === "failed"`)
	p, r = call("later", "later-a", "plan", 0, "planner", "openai", "gpt-5", 0, "later", "ok")
	p.StartNS, r.StartNS = uint64(time.Now().UnixNano()), uint64(time.Now().UnixNano())+1
	testkit.InsertTurns(t, conn, p, r)
	waitFor(t, ctx, "the new thread at the top", `document.querySelector("tr.thread-row").dataset.thread === "later"`)
	if polls.Load() == 0 {
		t.Error("no request of /api/threads: want the list polling without its feed")
	}
}
