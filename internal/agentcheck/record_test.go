package agentcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
)

// FixtureHome replaces the temporary HOME in recorded fixtures.
const FixtureHome = "/home/agentcheck"

// TestRecordFixtures re-records collector/testdata/recorded/agents. It runs only
// when CONVTRACE_AGENTCHECK_RECORD names the output folder, e.g.
//
//	CONVTRACE_AGENTCHECK_RECORD=$PWD/collector/testdata/recorded/agents \
//	  go test ./internal/agentcheck/ -run TestRecordFixtures -v
//
// CONVTRACE_AGENTCHECK_DUMP, if set, also receives every raw request.
func TestRecordFixtures(t *testing.T) {
	out := os.Getenv("CONVTRACE_AGENTCHECK_RECORD")
	if out == "" {
		t.Skip("set CONVTRACE_AGENTCHECK_RECORD=<dir> to re-record fixtures")
	}
	requireCLIs(t)
	dump := os.Getenv("CONVTRACE_AGENTCHECK_DUMP")
	record := func(t *testing.T, cli, name string, home string, run func(RunOptions) (*RunResult, error), o RunOptions) *RunResult {
		t.Helper()
		p := NewFakeProvider(DefaultScript)
		defer p.Close()
		c := testkit.NewOTLPCapture(t)
		px := NewBlackholeProxy()
		defer px.Close()
		o.ProviderURL, o.OTLPEndpoint, o.Home, o.ProxyURL = p.URL(), c.URL(), home, px.URL()
		res, err := run(o)
		if err != nil {
			t.Fatalf("%s %s: %v", cli, name, err)
		}
		// Exports are flushed at exit; allow for a late batch.
		c.WaitFor(3*time.Second, func([]testkit.OTLPRequest) bool { return false })
		if dump != "" {
			if err := DumpRun(filepath.Join(dump, cli, name), res, p, c, px); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(px.Targets()); n > 0 {
			t.Logf("%s %s tried outside hosts: %v", cli, name, px.Targets())
		}
		if errs := c.Errors(); len(errs) > 0 {
			t.Fatalf("capture errors: %v", errs)
		}
		rep := strings.NewReplacer(home, FixtureHome)
		if err := WriteFixtures(filepath.Join(out, cli), name, c, rep); err != nil {
			t.Fatal(err)
		}
		return res
	}
	ctx := context.Background()
	claude := func(o RunOptions) (*RunResult, error) { return RunClaude(ctx, o) }
	codex := func(o RunOptions) (*RunResult, error) { return RunCodex(ctx, o) }

	t.Run("claude-code", func(t *testing.T) {
		home := t.TempDir()
		res := record(t, "claude-code", "session", home, claude, RunOptions{Prompt: ScenarioPrompt})
		if res.SessionID == "" {
			t.Fatalf("no session id in claude output: %s", res.Stdout)
		}
		record(t, "claude-code", "resume", home, claude, RunOptions{Prompt: ResumePrompt, ResumeSessionID: res.SessionID})
	})
	t.Run("codex", func(t *testing.T) {
		record(t, "codex", "session", t.TempDir(), codex, RunOptions{Prompt: ScenarioPrompt})
	})
}
