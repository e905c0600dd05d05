package agentcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
)

// storedTurn is one stored turn of an agent's session.
type storedTurn struct {
	thread, role, tool, content, model, costSource string
	in, out, reasoning                             string
	cost                                           float64
}

// TestAgentsRecordedByConvtrace runs each real CLI with its own telemetry
// pointed at a real convtrace collector (the OTLP/HTTP receiver and the
// ingester on the test ClickHouse), and checks the session's thread call
// by call: the prompt, each provider request with its model and tokens
// (and Claude Code's cost), the tool call and its result, the answer where
// the agent sends it, in order, each once.
func TestAgentsRecordedByConvtrace(t *testing.T) {
	requireCLIs(t)
	for _, c := range []struct {
		name string
		run  func(context.Context, RunOptions) (*RunResult, error)
		want []string // role|tool|in|out|reasoning|content prefix, in order
	}{
		{"claude-code", RunClaude, []string{
			"prompt||||",
			"response|Bash|1600|40||",
			"tool_call|Bash||||{\"command\":\"echo hello\"",
			"tool_result|Bash||||hello",
			"prompt||||",
			"response||2300|25||done: hello",
		}},
		{"codex", RunCodex, []string{
			"prompt|||||" + `[{"role":"user","parts":[{"type":"text","content":"say hello using the shell"}]}]`,
			"response|exec_command|1200|40|8|",
			"tool_call|exec_command||||{\"cmd\":\"echo hello\"}",
			"tool_result|exec_command||||",
			"prompt||||",
			"response||1500|25|4|",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, dsn := testkit.Open(t)
			_, endpoint := collectorOn(t, dsn)
			p := NewFakeProvider(DefaultScript)
			defer p.Close()
			px := NewBlackholeProxy()
			defer px.Close()
			res, err := c.run(context.Background(), RunOptions{ProviderURL: p.URL(), OTLPEndpoint: endpoint, Protocol: ProtoProtobuf,
				Home: t.TempDir(), Prompt: ScenarioPrompt, ProxyURL: px.URL(), Timeout: 3 * time.Minute})
			if err != nil {
				t.Fatalf("run: %v\nstdout: %s", err, res.Stdout)
			}
			if res.SessionID == "" {
				t.Fatalf("no session id in the output: %s", res.Stdout)
			}
			var got []storedTurn
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				got = readSession(t, conn)
				if len(got) >= len(c.want) {
					break
				}
			}
			var lines []string
			for _, s := range got {
				lines = append(lines, strings.Join([]string{s.role, s.tool, s.in, s.out, s.reasoning, s.content}, "|"))
				if s.thread != res.SessionID {
					t.Errorf("turn %s in thread %q, want the session %q", s.role, s.thread, res.SessionID)
				}
			}
			if len(lines) != len(c.want) {
				t.Fatalf("stored %d turns, want %d:\n%s", len(lines), len(c.want), strings.Join(lines, "\n"))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("turn %d: %s\nwant prefix %s", i, lines[i], w)
				}
			}
			calls := 0
			for _, s := range got {
				if s.costSource == "" {
					continue
				}
				calls++
				if c.name == "claude-code" && (s.costSource != "provided" || s.cost <= 0) {
					t.Errorf("Claude Code call cost %v (%s), want its own cost_usd", s.cost, s.costSource)
				}
				if s.model == "" {
					t.Errorf("a call without its model: %+v", s)
				}
			}
			if calls != 2 {
				t.Errorf("%d calls stored, want the 2 provider requests", calls)
			}
			var copies, ids uint64
			if err := conn.QueryRow(context.Background(), "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&copies, &ids); err != nil || copies != ids {
				t.Errorf("%d rows FINAL for %d turns (%v)", copies, ids, err)
			}
		})
	}
}

// readSession reads every stored turn, in thread order. A prompt's
// content is what it adds to its history (the rest is in messages).
func readSession(t *testing.T, conn driver.Conn) []storedTurn {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
SELECT thread_id, role, tool_name, content, model, cost_source,
       ifNull(toString(tokens_in), ''), ifNull(toString(tokens_out), ''), ifNull(toString(tokens_reasoning), ''), ifNull(cost_usd, 0)
FROM conversations FINAL ORDER BY start_ns, turn_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedTurn
	for rows.Next() {
		var s storedTurn
		if err := rows.Scan(&s.thread, &s.role, &s.tool, &s.content, &s.model, &s.costSource, &s.in, &s.out, &s.reasoning, &s.cost); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
