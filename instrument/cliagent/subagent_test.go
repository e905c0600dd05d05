package cliagent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
)

// A Claude Code run whose Task tool starts a code-reviewer sub-agent: the
// sub-agent's turns and tool uses carry its name as their agent, and its
// tool spans nest under the Task's span. Before, they had no agent and
// hung off the run.
func TestClaudeSubagent(t *testing.T) {
	tp, sr, conn := provider(t)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	cmd := exec.Command("cat", "testdata/claude_subagent.jsonl")
	if _, err := cliagent.Command(instrument.WithThread(context.Background(), "sub-1"), cmd,
		instrument.Turn{Prompt: "Why are config defaults dropped?"}, cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatClaude)); err != nil {
		t.Fatal(err)
	}

	spanID := map[string]string{}
	parent := map[string]string{}
	agent := map[string]string{}
	for _, s := range sr.Ended() {
		spanID[s.Name()] = s.SpanContext().SpanID().String()
		parent[s.Name()] = s.Parent().SpanID().String()
		for _, a := range s.Attributes() {
			if string(a.Key) == schema.KeyAgent {
				agent[s.Name()] = a.Value.AsString()
			}
		}
	}
	for _, tool := range []string{"execute_tool Read", "execute_tool Grep"} {
		if parent[tool] != spanID["execute_tool Task"] || agent[tool] != "code-reviewer" {
			t.Errorf("%s: parent %s agent %q; want the Task span %s and code-reviewer", tool, parent[tool], agent[tool], spanID["execute_tool Task"])
		}
	}
	if parent["execute_tool Task"] != spanID["invoke_agent"] || agent["execute_tool Task"] != "" {
		t.Errorf("the Task span: parent %s agent %q; want the run %s and the main agent", parent["execute_tool Task"], agent["execute_tool Task"], spanID["invoke_agent"])
	}

	ctx := context.Background()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"prompt|||Why are config defaults droppe",
		"system|||{\"model\":\"claude-sonnet-4-5-20",
		"response|Task||[{\"role\":\"assistant\",\"parts\":[",
		"tool_call|Task||{\"description\":\"Review config ",
		"response|Read|code-reviewer|[{\"role\":\"assistant\",\"parts\":[",
		"tool_call|Read|code-reviewer|{\"file_path\":\"/repo/config/par",
		"tool_result|Read|code-reviewer|package config\n\nfunc parseConf",
		"response|Grep|code-reviewer|[{\"role\":\"assistant\",\"parts\":[",
		"tool_call|Grep|code-reviewer|{\"pattern\":\"defaultConfig\",\"pa",
		"tool_result|Grep|code-reviewer|config/defaults.go:3:func defa",
		"response||code-reviewer|parseConfig starts from a zero",
		"tool_result|Task||parseConfig starts from a zero",
		"response|||The reviewer found it: parseCo",
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rs, err := conn.Query(ctx, `SELECT role, tool_name, agent, substring(content, 1, 30) FROM conversations FINAL
WHERE thread_id = 'sub-1' ORDER BY start_ns, seq`)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for rs.Next() {
			var role, tool, agent, content string
			if err := rs.Scan(&role, &tool, &agent, &content); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Join([]string{role, tool, agent, content}, "|"))
		}
		rs.Close()
		if len(got) >= len(want) {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("turns (role|tool|agent|content):\n got %q\nwant %q", got, want)
	}

	// The thread page's Agent filter offers the sub-agent, and picks its
	// turns.
	h := viewer.New(conn).Handler()
	page := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/threads/sub-1", nil)
	req.Host = "127.0.0.1"
	h.ServeHTTP(page, req)
	if !strings.Contains(page.Body.String(), "<option>code-reviewer</option>") {
		t.Errorf("the Agent filter does not offer code-reviewer")
	}
	var only struct {
		Turns []store.Turn `json:"turns"`
	}
	rec2 := httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodGet, "/api/threads/sub-1?agent=code-reviewer", nil)
	req.Host = "127.0.0.1"
	h.ServeHTTP(rec2, req)
	if err := json.Unmarshal(rec2.Body.Bytes(), &only); err != nil || len(only.Turns) != 7 {
		t.Errorf("agent=code-reviewer: %d turns (%v), want the sub-agent's 7 (3 calls, 2 tools)", len(only.Turns), err)
	}
}

func TestResumeArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"claude", "-p", "go on"}, "claude --resume S -p go on", true},
		{[]string{"/usr/local/bin/codex", "exec", "--json", "go on"}, "/usr/local/bin/codex exec --json resume S go on", true},
		{[]string{"codex", "exec", "--json", "-s", "danger-full-access", "go on", "-m", "gpt-5"}, "codex exec --json -s danger-full-access -m gpt-5 resume S go on", true},
		{[]string{"codex", "exec", "--json"}, "codex exec --json resume S", true},
		{[]string{"claude", "--resume", "X", "-p", "go on"}, "claude --resume X -p go on", false},
		{[]string{"codex", "exec", "resume", "--last", "go on"}, "codex exec resume --last go on", false},
		{[]string{"aider", "--message", "go on"}, "aider --message go on", false},
	}
	for _, tt := range tests {
		got, ok := cliagent.ResumeArgs(tt.args, "S")
		if strings.Join(got, " ") != tt.want || ok != tt.ok {
			t.Errorf("ResumeArgs(%q) = %q, %v; want %q, %v", tt.args, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKnownSession(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"claude", "--session-id", "S1", "-p", "x"}, "S1"},
		{[]string{"claude", "--session-id=S2", "-p", "x"}, "S2"},
		{[]string{"claude", "--resume", "S3", "-p", "x"}, "S3"},
		{[]string{"claude", "--resume", "S3", "--fork-session", "-p", "x"}, ""},
		{[]string{"codex", "exec", "--json", "resume", "T1", "go on"}, "T1"},
		{[]string{"codex", "exec", "--json", "go on"}, ""},
		{[]string{"claude", "-p", "x"}, ""},
	} {
		if got := cliagent.KnownSession(tt.args); got != tt.want {
			t.Errorf("KnownSession(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
