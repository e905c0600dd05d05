package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// fakeClaude is a `claude` that records its arguments, accepts --resume of
// any session but one starting with "stale" (which it rejects as Claude
// Code does: "No conversation found with session ID", exit 1), and starts
// the session $FAKE_SESSION otherwise.
const fakeClaude = `#!/bin/sh
echo "$@" >> "$FAKE_ARGS"
session="$FAKE_SESSION"
if [ "$1" = "--resume" ]; then
  case "$2" in
    stale*) echo "No conversation found with session ID: $2" >&2; exit 1 ;;
    *) session="$2" ;;
  esac
fi
echo '{"type":"system","subtype":"init","session_id":"'"$session"'","model":"claude-sonnet-4-5","tools":[]}'
echo '{"type":"assistant","message":{"model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}]},"parent_tool_use_id":null,"session_id":"'"$session"'"}'
echo '{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"result":"done","session_id":"'"$session"'","usage":{"input_tokens":3,"output_tokens":1}}'
`

// run --resume continues the thread's current Claude session; a session
// the agent rejects is retried once without it, the warning recorded, and
// the new session becomes the thread's current one, shown on its page.
// run --agent labels the run's turns.
func TestRunResumesTheThreadsSession(t *testing.T) {
	conn, dsn := testkit.Open(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(fakeClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_ARGS", argsFile)
	agentRun := func(session string, flags ...string) (int, string) {
		t.Setenv("FAKE_SESSION", session)
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"run", "--clickhouse", dsn, "--thread", "resumable"}, flags...),
			"--", "claude", "-p", "--output-format", "stream-json", "go on")
		code := run(context.Background(), args, streams{&stdout, &stderr, strings.NewReader("")})
		return code, stderr.String()
	}
	current := func() string {
		s, err := store.CurrentSession(context.Background(), conn, "resumable", "anthropic")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	lastArgs := func() string {
		b, _ := os.ReadFile(argsFile)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return lines[len(lines)-1]
	}

	if code, stderr := agentRun("first-1111-2222-3333", "--agent", "executor-sub"); code != 0 || current() != "first-1111-2222-3333" {
		t.Fatalf("first run: exit %d, current session %q (stderr %q)", code, current(), stderr)
	}
	if got := queryText(t, conn, "SELECT DISTINCT agent FROM conversations WHERE thread_id = 'resumable'"); strings.Join(got, ",") != "executor-sub" {
		t.Errorf("--agent: the run's turns have agents %q, want executor-sub", got)
	}
	if code, stderr := agentRun("unused", "--resume"); code != 0 || lastArgs() != "--resume first-1111-2222-3333 -p --output-format stream-json go on --include-partial-messages" {
		t.Errorf("resumed run: exit %d, args %q (stderr %q)", code, lastArgs(), stderr)
	}

	// A run outside convtrace left a session the agent no longer knows.
	if code, _ := agentRun("stale-4444-5555-6666"); code != 0 || current() != "stale-4444-5555-6666" {
		t.Fatalf("the run that starts the stale session: exit %d, current %q", code, current())
	}
	code, stderr := agentRun("fresh-7777-8888-9999", "--resume")
	var own []string // what convtrace said, beside the agent's own stderr
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "convtrace run:") {
			own = append(own, l)
		}
	}
	if code != 0 || !strings.Contains(stderr, "running it again without resuming") || strings.Contains(strings.Join(own, "\n"), "stale-4444") {
		t.Errorf("rejected resume: exit %d, stderr %q; want 0, the retry said, and no session id in convtrace's lines", code, stderr)
	}
	if lastArgs() != "-p --output-format stream-json go on --include-partial-messages" || current() != "fresh-7777-8888-9999" {
		t.Errorf("after the retry: last args %q, current session %q; want no --resume and the fresh session", lastArgs(), current())
	}
	if got := queryText(t, conn, "SELECT count() FROM conversations WHERE thread_id = 'resumable' AND role = 'warning' AND has(attributes.value, 'session_resume_invalid')"); got[0] != "1" {
		t.Errorf("%s warning turns for the rejected session, want 1", got[0])
	}

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/threads/resumable", nil)
	req.Host = "127.0.0.1"
	viewer.New(conn).Handler().ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `title="fresh-7777-8888-9999">fresh-77…</code>`) {
		t.Errorf("the thread page does not show the current session shortened")
	}
}
