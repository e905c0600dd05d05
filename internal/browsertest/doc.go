// Package browsertest drives a real headless Chromium (Debian's chromium)
// from Go tests with chromedp, and saves screenshots of what it showed.
//
// A test calls New for a browser tab; it is skipped with a clear message when
// no Chromium binary is installed, and fails instead when
// CONVTRACE_REQUIRE_CHROMIUM=1 (which make test sets). Screenshot writes
// PNGs under test-output/screenshots at the repository root, or under
// $CONVTRACE_TEST_OUTPUT when that is set.
package browsertest
