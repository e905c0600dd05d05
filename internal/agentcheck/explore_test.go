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

// TestExplore runs one CLI and dumps everything; for development only.
// AGENTCHECK_EXPLORE=claude|codex, AGENTCHECK_DUMP=dir, AGENTCHECK_PROTO=json|protobuf.
func TestExplore(t *testing.T) {
	which := os.Getenv("AGENTCHECK_EXPLORE")
	if which == "" {
		t.Skip("set AGENTCHECK_EXPLORE=claude or codex")
	}
	dump := os.Getenv("AGENTCHECK_DUMP")
	p := NewFakeProvider(DefaultScript)
	defer p.Close()
	c := testkit.NewOTLPCapture(t)
	px := NewBlackholeProxy()
	defer px.Close()
	home := t.TempDir()
	o := RunOptions{
		ProviderURL: p.URL(), OTLPEndpoint: c.URL(), Home: home,
		Prompt: "say hello using the shell", Protocol: Protocol(os.Getenv("AGENTCHECK_PROTO")),
		ProxyURL: px.URL(), CodexOtelExtra: os.Getenv("AGENTCHECK_CODEX_OTEL"), NoContent: os.Getenv("AGENTCHECK_NOCONTENT") != "", Model: os.Getenv("AGENTCHECK_MODEL"), Timeout: 3 * time.Minute, StreamJSON: os.Getenv("AGENTCHECK_STREAM") != "", ExtraArgs: strings.Fields(os.Getenv("AGENTCHECK_ARGS")),
	}
	var res *RunResult
	var err error
	if which == "claude" {
		res, err = RunClaude(context.Background(), o)
	} else {
		res, err = RunCodex(context.Background(), o)
	}
	t.Logf("run err=%v", err)
	time.Sleep(2 * time.Second)
	if derr := DumpRun(filepath.Join(dump, which), res, p, c, px); derr != nil {
		t.Fatal(derr)
	}
	if derr := WriteFixtures(filepath.Join(dump, which, "fixtures"), "session", c, nil); derr != nil {
		t.Fatal(derr)
	}
}
