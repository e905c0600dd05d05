package viewer_test

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/synth"
	"github.com/convtrace/convtrace/viewer"
)

// benchBrowserEnv turns the browser benchmark on: it needs the million
// turns and a Chromium, which nothing run by make test should wait for.
const benchBrowserEnv = "CONVTRACE_BENCH"

// navigationTiming is what the browser's Navigation Timing entry says of a
// page load, in milliseconds from navigation start.
type navigationTiming struct {
	Interactive float64 `json:"interactive"` // domInteractive: the HTML parsed
	Ready       float64 `json:"ready"`       // domContentLoadedEventEnd: the deferred page scripts ran and set up
	Load        float64 `json:"load"`        // loadEventEnd: stylesheets and everything else loaded
}

// navigationEntry waits for the load event to end, then answers the timing
// of the current page's navigation.
const navigationEntry = `(() => {
	const n = performance.getEntriesByType("navigation")[0];
	return n && n.loadEventEnd > 0 && {interactive: n.domInteractive, ready: n.domContentLoadedEventEnd, load: n.loadEventEnd};
})()`

// BenchmarkViewerBrowser loads a 1000-turn thread page in headless
// Chromium once per op, and a 10-turn thread page as its baseline, over
// the million synthetic turns. It reports the median of each Navigation
// Timing mark over the ops; ns/op is the whole navigation as the test sees
// it, DevTools round trips included. Set CONVTRACE_BENCH=1 to run it.
func BenchmarkViewerBrowser(b *testing.B) {
	if os.Getenv(benchBrowserEnv) != "1" {
		b.Skipf("set %s=1 to time pages in Chromium over the synthetic million turns", benchBrowserEnv)
	}
	h, _ := benchServer(b)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tt := range []struct{ name, thread string }{
		{"Thread10Page", synth.Thread10},
		{"Thread1000Page", synth.Thread1000},
	} {
		b.Run(tt.name, func(b *testing.B) { timePage(b, srv.URL+"/threads/"+tt.thread, tt.name) })
	}
}

// BenchmarkLargeThreadBrowser loads thread pages of 1,000 turns in
// headless Chromium, of short turns and of 60 KB turns (60 MB of text),
// with a 10-turn page as the baseline, each on a fresh database of its own
// threads. Set CONVTRACE_BENCH=1 to run it.
func BenchmarkLargeThreadBrowser(b *testing.B) {
	if os.Getenv(benchBrowserEnv) != "1" {
		b.Skipf("set %s=1 to time large thread pages in Chromium", benchBrowserEnv)
	}
	conn, _ := testkit.Open(b)
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.DiscardHandler))).Handler()
	largeThread(b, conn, "th-10", 5, 300)
	largeThread(b, conn, "th-1000-short", 500, 300)
	largeThread(b, conn, "th-1000-60k", 500, 60<<10)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, name := range []string{"th-10", "th-1000-short", "th-1000-60k"} {
		b.Run(name, func(b *testing.B) { timePage(b, srv.URL+"/threads/"+name, "large-"+name) })
	}
}

// timePage loads page in Chromium once per op and reports the median of
// each Navigation Timing mark, and its first screen as a screenshot.
func timePage(b *testing.B, page, shotName string) {
	ctx := testkit.Browser(b, 10*time.Minute)
	var interactive, ready, load []float64
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			b.Fatalf("navigate to %s: %v", page, err)
		}
		nt, err := chromedp.Run(ctx, chromedp.Poll[navigationTiming](navigationEntry, chromedp.WithPollingTimeout(time.Minute)))
		if err != nil {
			b.Fatalf("navigation timing of %s: %v", page, err)
		}
		interactive = append(interactive, nt.Interactive)
		ready = append(ready, nt.Ready)
		load = append(load, nt.Load)
	}
	b.StopTimer()
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType("navigation")[0].responseStatus`))
	if err != nil || status != 200 {
		b.Fatalf("%s: status %d (%v), want 200", page, status, err)
	}
	// The first screen only: a full-page screenshot of a thousand
	// turns is taller than Chromium captures.
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.Fatalf("screenshot %s: %v", page, err)
	}
	shot := filepath.Join(testkit.OutputDir(b), "bench-"+shotName+".png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(median(interactive), "interactive-ms")
	b.ReportMetric(median(ready), "ready-ms")
	b.ReportMetric(median(load), "load-ms")
}
