package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
)

func TestRunRecordsAnAgent(t *testing.T) {
	conn, dsn := testkit.Open(t)
	script, _ := filepath.Abs("../../instrument/cliagent/testdata/agent.sh")
	transcript, _ := filepath.Abs("../../instrument/cliagent/testdata/claude.jsonl")
	want, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TRANSCRIPT", transcript)
	t.Setenv("FAKE_EXIT", "7")

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--clickhouse", dsn, "--thread", "issue-9", "--phase", "execute", "--round", "1",
		"--speaker", "claude-executor", "--project", "shipcode", "--", script, "-p", "--output-format", "stream-json", "Why does TestParseConfig fail?"},
		streams{&stdout, &stderr, strings.NewReader("")})
	if code != 7 {
		t.Errorf("exit code %d, want the agent's 7 (stderr %q)", code, stderr.String())
	}
	// Byte for byte, but for the stream events the run asked for and the
	// caller did not (--include-partial-messages).
	var asked []byte
	for _, line := range bytes.SplitAfter(want, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"type":"stream_event"`)) {
			asked = append(asked, line...)
		}
	}
	if !bytes.Equal(stdout.Bytes(), asked) {
		t.Errorf("stdout is not the agent's output byte for byte")
	}

	rows, err := conn.Query(context.Background(), "SELECT role, phase, round, speaker, project FROM conversations FINAL WHERE thread_id = 'issue-9' ORDER BY start_ns, seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var roles []string
	for rows.Next() {
		var role, phase, speaker, project string
		var round uint16
		if err := rows.Scan(&role, &phase, &round, &speaker, &project); err != nil {
			t.Fatal(err)
		}
		if phase != "execute" || round != 1 || speaker != "claude-executor" || project != "shipcode" {
			t.Errorf("%s row: phase %q round %d speaker %q project %q", role, phase, round, speaker, project)
		}
		roles = append(roles, role)
	}
	got := strings.Join(roles, " ")
	if !strings.HasPrefix(got, "prompt system ") || !strings.Contains(got, "tool_call") || !strings.HasSuffix(got, " error") {
		t.Errorf("roles %q: want the prompt, the agent's turns and an error row for exit status 7", got)
	}
}

func TestRunNeedsACommand(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--clickhouse", "clickhouse://127.0.0.1:1/x"}, streams{&bytes.Buffer{}, &stderr, strings.NewReader("")}); code != 1 || !strings.Contains(stderr.String(), "no command to run") {
		t.Errorf("run without a command: exit %d, stderr %q", code, stderr.String())
	}
}

func TestRunRecordsCodex(t *testing.T) {
	conn, dsn := testkit.Open(t)
	script, _ := filepath.Abs("../../instrument/cliagent/testdata/agent.sh")
	transcript, _ := filepath.Abs("../../instrument/cliagent/testdata/codex.jsonl")
	want, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TRANSCRIPT", transcript)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--clickhouse", dsn, "--thread", "issue-10", "--", script, "exec", "--json", "fix it"},
		streams{&stdout, &stderr, strings.NewReader("")})
	if code != 0 || !bytes.Equal(stdout.Bytes(), want) {
		t.Fatalf("exit %d (stderr %q); stdout byte-identical: %v", code, stderr.String(), bytes.Equal(stdout.Bytes(), want))
	}
	var roles []string
	rows, err := conn.Query(context.Background(), "SELECT role FROM conversations FINAL WHERE thread_id = 'issue-10' ORDER BY start_ns, seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var role string
		if err := rows.Scan(&role); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, role)
	}
	got := strings.Join(roles, " ")
	if !strings.HasPrefix(got, "prompt ") || !strings.Contains(got, "tool_call tool_result") || !strings.HasSuffix(got, " response") {
		t.Errorf("codex roles %q: want the prompt, paired tool rows and the final response", got)
	}
}

// A `convtrace run` killed with SIGKILL while its agent runs leaves the
// call's pending prompt, which `convtrace serve --interrupted-after 3s`
// shows running while it is fresh, then interrupted, its prompt kept.
func TestKilledRunLeavesAnInterruptedCall(t *testing.T) {
	s := startServe(t, "--interrupted-after", "3s")
	run := testkit.Start(t, nil, "run", "--clickhouse", s.dsn, "--thread", "killed", "--", "sleep", "30")

	prompt := func() (store.Turn, bool) {
		res, err := http.Get(s.viewer + "/api/threads/killed/turns?role=prompt")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct{ Turns []store.Turn }
		if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&body) != nil || len(body.Turns) != 1 {
			return store.Turn{}, false
		}
		return body.Turns[0], true
	}
	waitFor := func(what string, ok func(store.Turn) bool) store.Turn {
		t.Helper()
		var last store.Turn
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if p, found := prompt(); found {
				if last = p; ok(p) {
					return p
				}
			}
		}
		t.Fatalf("no %s within 15 s; last prompt seen: %+v", what, last)
		return last
	}

	p := waitFor("pending prompt", func(store.Turn) bool { return true })
	if !p.Running || p.Interrupted {
		t.Errorf("prompt of the live run: running %v, interrupted %v; want running", p.Running, p.Interrupted)
	}
	run.Kill(t)
	killedAt := time.Now()
	p = waitFor("interrupted call", func(p store.Turn) bool { return p.Interrupted })
	t.Logf("interrupted %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	if p.Running || p.Content != "30" {
		t.Errorf("prompt of the killed run: running %v, content %q; want interrupted with its prompt %q", p.Running, p.Content, "30")
	}
	res, err := http.Get(s.viewer + "/threads/killed")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(page), `<span class="pill interrupted">1 interrupted</span>`) || strings.Contains(string(page), `running</span>`) {
		t.Errorf("thread page of the killed run does not show 1 interrupted call and none running")
	}
}
