package testkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumEnv is the environment variable that turns a missing Chromium from
// a skip into a failure.
const ChromiumEnv = "CONVTRACE_REQUIRE_CHROMIUM"

// OutputEnv names the folder screenshots go to instead of test-output/.
const OutputEnv = "CONVTRACE_TEST_OUTPUT"

// ErrNoBrowser means no Chromium binary was found on PATH.
var ErrNoBrowser = errors.New("no chromium binary on PATH (install Debian's chromium: apt-get install -y chromium)")

// binaries are the names Chromium is installed under, Debian's first.
var binaries = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindBrowser returns the path of an installed Chromium, or ErrNoBrowser.
func FindBrowser() (string, error) {
	for _, name := range binaries {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Browser starts a headless Chromium for t and returns a context whose chromedp
// actions run in its one tab. The browser is closed when t ends. timeout
// bounds everything the test does in the browser.
func Browser(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	bin, err := FindBrowser()
	if err != nil {
		if os.Getenv(ChromiumEnv) == "1" {
			t.Fatalf("browser test: %v (%s=1)", err, ChromiumEnv)
		}
		t.Skipf("skipping browser test: %v (set %s=1 to fail instead)", err, ChromiumEnv)
	}
	// The flags keep Chromium off the network: this machine reaches no
	// outside host, and background requests would only fail and slow it.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	return ctx
}

// OutputDir is the folder screenshots are written to, created on demand.
func OutputDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(OutputEnv)
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "test-output")
	}
	dir = filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot folder: %v", err)
	}
	return dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// paintAll makes the elements skipped off screen visible, marked so that
// paintAsBefore can put them back; a script's CSSOM changes are not inline
// styles, so no Content-Security-Policy refuses them.
const (
	paintAll = `(() => {
		for (const e of document.querySelectorAll("*")) {
			if (getComputedStyle(e).contentVisibility === "auto") {
				e.style.contentVisibility = "visible";
				e.dataset.paintedForScreenshot = "1";
			}
		}
		return true;
	})()`
	paintAsBefore = `(() => {
		for (const e of document.querySelectorAll("[data-painted-for-screenshot]")) {
			e.style.contentVisibility = "";
			delete e.dataset.paintedForScreenshot;
		}
		return true;
	})()`
)

// Screenshot saves a full-page PNG of the tab as name.png in OutputDir and
// returns its path; of a page too tall to capture, the window's. Elements a page leaves unpainted until they near the
// window (content-visibility: auto) are painted for the picture, then left
// as they were.
func Screenshot(ctx context.Context, t testing.TB, name string) string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](paintAll)); err != nil {
		t.Fatalf("screenshot %s: paint the page: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; less is JPEG
	if err != nil && strings.Contains(err.Error(), "too large") {
		// A page of a thousand cards is taller than Chromium captures:
		// the window alone.
		t.Logf("screenshot %s: the page is too tall, the window only", name)
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if _, restoreErr := chromedp.Run(ctx, chromedp.Evaluate[bool](paintAsBefore)); err == nil && restoreErr != nil {
		err = restoreErr
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(OutputDir(t), unsafeName.ReplaceAllString(name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	t.Logf("screenshot %s", path)
	return path
}

// repoRoot is the folder holding go.mod, found upward from the test's
// working directory (its package folder).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
