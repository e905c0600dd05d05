package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/chtest"
)

func TestRunRecordsAnAgent(t *testing.T) {
	conn, dsn := chtest.Open(t)
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
	if !bytes.Equal(stdout.Bytes(), want) {
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
	conn, dsn := chtest.Open(t)
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
