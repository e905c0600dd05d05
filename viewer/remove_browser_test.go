package viewer_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/store"
)

// "Delete" on a thread's page asks first, naming the thread and its turn
// count: dismissed, nothing happens; accepted, the thread is gone and the
// browser is back on the list.
func TestDeleteThreadInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _ := listFixture(t)
	base := serve(t, h)
	var th store.Thread
	getJSON(t, h, "/api/threads/k1", http.StatusOK, &struct {
		Thread *store.Thread `json:"thread"`
	}{&th})

	asked := make(chan string, 4)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			select {
			case asked <- e.Message:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	// clickDelete clicks Delete, answers the confirmation and returns what
	// it asked. The click returns once the dialog is answered.
	clickDelete := func(accept bool) string {
		t.Helper()
		clicked := make(chan error, 1)
		go func() {
			clicked <- chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".thread-actions button.delete"), chromedp.NodeVisible))
		}()
		var msg string
		select {
		case msg = <-asked:
		case <-time.After(10 * time.Second):
			t.Fatal("no confirmation was asked")
		}
		if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept}); err != nil {
			t.Fatal(err)
		}
		if err := <-clicked; err != nil {
			t.Fatal(err)
		}
		return msg
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/k1"), chromedp.WaitVisible(chromedp.CSS("button.delete"))); err != nil {
		t.Fatal(err)
	}
	msg := clickDelete(false)
	for _, want := range []string{th.Title, "k1", fmt.Sprintf("its %d turns", th.Turns), "cannot be undone"} {
		if !strings.Contains(msg, want) {
			t.Errorf("confirmation %q does not say %q", msg, want)
		}
	}
	if res := get(t, h, "/api/threads/k1"); res.status != http.StatusOK {
		t.Fatalf("after dismissing, GET the thread: %d, want 200", res.status)
	}

	clickDelete(true)
	waitFor(t, ctx, "the threads list", `location.pathname === "/" && document.querySelectorAll("tr.thread-row").length > 0`)
	if got := rowIDs(t, ctx); strings.Contains(got, "k1") {
		t.Errorf("rows after the deletion %q still list k1", got)
	}
	if res := get(t, h, "/api/threads/k1"); res.status != http.StatusNotFound {
		t.Errorf("after accepting, GET the thread: %d, want 404", res.status)
	}
}
