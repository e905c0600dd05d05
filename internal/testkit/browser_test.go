package testkit_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The browser runs the page's script: a click changes the text, and the
// screenshot is a PNG on disk.
func TestBrowserRunsScriptAndScreenshots(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><button id="b">press</button><p id="out">before</p>
<script>document.getElementById("b").onclick = () => { document.getElementById("out").textContent = "after 한국어"; };</script>`))
	}))
	defer srv.Close()

	ctx := testkit.Browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL), chromedp.Click(chromedp.CSS("#b"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#out")))
	if err != nil {
		t.Fatal(err)
	}
	if got != "after 한국어" {
		t.Errorf("text after click %q, want %q", got, "after 한국어")
	}
	path := testkit.Screenshot(ctx, t, "testkit-browser-smoke")
	png, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Errorf("screenshot %s is not a PNG (%d bytes)", path, len(png))
	}
}
