package agentcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// requireCLIs skips the test when the pinned CLIs are not installed, or
// fails it when CONVTRACE_REQUIRE_AGENTS=1.
func requireCLIs(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"claude", "codex"} {
		if _, err := os.Stat(filepath.Join(DefaultBinDir(), bin)); err != nil {
			msg := "agent CLIs not installed: run `npm ci` in internal/agentcheck (needs the npm registry) to enable this test"
			if os.Getenv("CONVTRACE_REQUIRE_AGENTS") == "1" {
				t.Fatalf("%s (CONVTRACE_REQUIRE_AGENTS=1): %v", msg, err)
			}
			t.Skip(msg)
		}
	}
}
