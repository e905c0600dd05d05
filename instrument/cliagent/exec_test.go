package cliagent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/topology"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// agent returns a command running the fake agent with env set.
func agent(ctx context.Context, t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	path, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// provider returns a tracer provider exporting to a fresh database, with a
// span recorder beside it, and the database.
func provider(t *testing.T, opts ...collector.ProviderOption) (*sdktrace.TracerProvider, *tracetest.SpanRecorder, *topology.Conn) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, append([]collector.ProviderOption{collector.WithProject("cliagent")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	sr := tracetest.NewSpanRecorder()
	tp.RegisterSpanProcessor(sr)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.TracerProvider, sr, conn
}

type row struct {
	role, content, errText, session, tool, callID string
	tokensIn, cacheRead                           *uint32
	cost                                          *float64
}

func (r row) String() string {
	s := fmt.Sprintf("%s tool=%q id=%q session=%q content=%.60q error=%.80q", r.role, r.tool, r.callID, r.session, r.content, r.errText)
	if r.tokensIn != nil {
		s += fmt.Sprintf(" in=%d", *r.tokensIn)
	}
	if r.cacheRead != nil {
		s += fmt.Sprintf(" cache_read=%d", *r.cacheRead)
	}
	if r.cost != nil {
		s += fmt.Sprintf(" cost=%g", *r.cost)
	}
	return s
}

func rows(t *testing.T, tp *sdktrace.TracerProvider, conn driver.Conn) []row {
	t.Helper()
	ctx := context.Background()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	rs, err := conn.Query(ctx, `SELECT role, content, error, session_id, tool_name, tool_call_id, tokens_in, tokens_cache_read, cost_usd
		FROM conversations FINAL ORDER BY start_ns, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.role, &r.content, &r.errText, &r.session, &r.tool, &r.callID, &r.tokensIn, &r.cacheRead, &r.cost); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func roles(rs []row) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.role)
	}
	return strings.Join(s, " ")
}

func TestCommandClaude(t *testing.T) {
	tp, sr, conn := provider(t)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	transcript, _ := os.ReadFile("testdata/claude.jsonl")

	var stdout bytes.Buffer
	cmd := agent(context.Background(), t, map[string]string{"FAKE_TRANSCRIPT": "testdata/claude.jsonl"},
		"-p", "Why does TestParseConfig fail?", "--output-format", "stream-json", "--verbose")
	cmd.Stdout = &stdout
	code, err := cliagent.Command(instrument.WithThread(context.Background(), "issue-7"), cmd,
		instrument.Turn{Phase: "plan"}, cliagent.WithRecorder(rec)) // format sniffed
	if err != nil || code != 0 {
		t.Fatalf("Command = %d, %v", code, err)
	}
	// The stream events the run asked for (--include-partial-messages)
	// are not passed on: the caller did not ask for them.
	var want bytes.Buffer
	for _, line := range bytes.SplitAfter(transcript, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"type":"stream_event"`)) {
			want.Write(line)
		}
	}
	if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
		t.Errorf("stdout differs from the transcript without its stream events:\n%s", stdout.Bytes())
	}

	const sid = "8f3c2a51-6d7e-4b0a-9c1d-2e5f7a9b0c11"
	spans := sr.Ended()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
		if !hasAttr(s, schema.KeySessionID, sid) {
			t.Errorf("span %q lacks the session id: %v", s.Name(), s.Attributes())
		}
	}
	// Each provider call is its span, ended before the tools it asked for
	// start.
	if w := "chat claude-sonnet-4-5-20250929,execute_tool Bash,chat claude-sonnet-4-5-20250929,execute_tool Read,chat claude-sonnet-4-5-20250929,invoke_agent"; strings.Join(names, ",") != w {
		t.Fatalf("spans ended:\n got %s\nwant %s", strings.Join(names, ","), w)
	}
	run := spans[len(spans)-1]
	var got []string
	for _, e := range run.Events() {
		name := e.Name
		for _, a := range e.Attributes {
			if string(a.Key) == schema.KeyRole {
				name += ":" + a.Value.AsString()
			}
		}
		got = append(got, name)
	}
	if w := "gen_ai.prompt convtrace.turn:system convtrace.turn:unknown gen_ai.response"; strings.Join(got, " ") != w {
		t.Errorf("run span events:\n got %s\nwant %s", strings.Join(got, " "), w)
	}
	if ev := run.Events(); !slices.ContainsFunc(ev[len(ev)-1].Attributes, func(a attribute.KeyValue) bool {
		return string(a.Key) == schema.KeyRecordedElsewhere && a.Value.AsBool()
	}) {
		t.Errorf("the run's answer is not left to its last call: %v", ev[len(ev)-1].Attributes)
	}

	rs := rows(t, tp, conn)
	for _, r := range rs {
		t.Log(r)
	}
	// Turn for turn in the transcript's order: the run's prompt and init,
	// each call's answer (text and tool use) before its tools run, the
	// unparseable line, the last call's answer, which is the run's.
	if w := "prompt system response tool_call tool_result_error response tool_call tool_result unknown response"; roles(rs) != w {
		t.Errorf("roles:\n got %s\nwant %s", roles(rs), w)
	}
	if rs[0].content != "Why does TestParseConfig fail?" {
		t.Errorf("prompt = %q", rs[0].content)
	}
	first := rs[2]
	if !strings.Contains(first.content, "I'll look at the failing test first.") || !strings.Contains(first.content, `"name":"Bash"`) ||
		first.tokensIn == nil || *first.tokensIn != 4+1200+11000 || first.cacheRead == nil || *first.cacheRead != 11000 {
		t.Errorf("first call's row: %v", first)
	}
	last := rs[len(rs)-1]
	if last.content != "parseConfig ignores the file; the fix is to read it." || last.session != sid ||
		last.tokensIn == nil || *last.tokensIn != 8+12500 || last.cacheRead == nil || *last.cacheRead != 12500 {
		t.Errorf("last call's row: %v", last)
	}
	var outSum uint64
	if err := conn.QueryRow(context.Background(), `SELECT sum(tokens_out) FROM conversations FINAL WHERE cost_source != ''`).Scan(&outSum); err != nil || outSum != 60+40+20 {
		t.Errorf("output tokens of the calls: %d (%v), want 120", outSum, err)
	}
	if rs[3].tool != "Bash" || rs[3].callID != "toolu_01Bash" || rs[3].content != `{"command":"go test ./config/","description":"Run the config tests"}` {
		t.Errorf("tool_call row: %v", rs[3])
	}
	if rs[4].tool != "Bash" || rs[4].callID != "toolu_01Bash" || rs[4].role != "tool_result_error" {
		t.Errorf("failed tool result row: %v", rs[4])
	}
}

func TestCommandCodexExitCode(t *testing.T) {
	tp, sr, conn := provider(t)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	transcript, _ := os.ReadFile("testdata/codex.jsonl")

	var stdout, stderr bytes.Buffer
	cmd := agent(context.Background(), t, map[string]string{
		"FAKE_TRANSCRIPT": "testdata/codex.jsonl", "FAKE_EXIT": "3",
		"FAKE_STDERR": "Error: thread not found: 0199a213",
	}, "exec", "--json", "resume", "0199a213", "fix it")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code, err := cliagent.Command(context.Background(), cmd, instrument.Turn{}, cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatCodex))
	if code != 3 || err == nil {
		t.Fatalf("Command = %d, %v; want 3 and an exit error", code, err)
	}
	if !bytes.Equal(stdout.Bytes(), transcript) {
		t.Errorf("stdout differs from the transcript:\n%s", stdout.Bytes())
	}
	if stderr.String() != "Error: thread not found: 0199a213\n" {
		t.Errorf("stderr = %q", stderr.String())
	}
	spans := sr.Ended()
	if len(spans) != 5 { // run + command, file change, mcp, web search
		t.Errorf("got %d spans, want 5", len(spans))
	}
	run := spans[len(spans)-1]
	var warned bool
	for _, e := range run.Events() {
		for _, a := range e.Attributes {
			if string(a.Key) == schema.KeyCode && a.Value.AsString() == cliagent.CodeSessionResumeInvalid {
				warned = true
			}
		}
	}
	if !warned {
		t.Errorf("no %s warning among %v", cliagent.CodeSessionResumeInvalid, run.Events())
	}

	rs := rows(t, tp, conn)
	for _, r := range rs {
		t.Log(r)
	}
	// The warning the pipeline branches on is a row of its own.
	if !strings.Contains(roles(rs), " warning ") {
		t.Errorf("no warning row among %s", roles(rs))
	}
	if rs[0].role != schema.RolePrompt || rs[0].content != "fix it" {
		t.Errorf("first row: %v", rs[0])
	}
	last := rs[len(rs)-1]
	if last.role != schema.RoleError || last.errText != "exit status 3: Error: thread not found: 0199a213" ||
		last.session != "0199a213-81c0-7800-8aa1-bbab2a035a53" {
		t.Errorf("last row: %v", last)
	}
}

func TestCommandPlainStdin(t *testing.T) {
	tp, _, conn := provider(t)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	var stdout bytes.Buffer
	cmd := exec.Command("tr", "a-z", "A-Z")
	cmd.Stdin = strings.NewReader("shout this\n")
	cmd.Stdout = &stdout
	code, err := cliagent.Command(context.Background(), cmd, instrument.Turn{Prompt: ""}, cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatPlain))
	if code != 0 || err != nil || stdout.String() != "SHOUT THIS\n" {
		t.Fatalf("Command = %d, %v, stdout %q", code, err, stdout.String())
	}
	rs := rows(t, tp, conn)
	if roles(rs) != "prompt response" || rs[0].content != "a-z A-Z" || rs[1].content != "SHOUT THIS\n" {
		t.Errorf("rows: %v", rs)
	}
}

func TestCommandKilled(t *testing.T) {
	tp, _, conn := provider(t, collector.WithPendingAfter(100*time.Millisecond))
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := agent(ctx, t, map[string]string{"FAKE_SLEEP": "30", "FAKE_STDERR": "working..."}, "-p", "long task")
	done := make(chan struct{})
	var code int
	var err error
	go func() {
		defer close(done)
		code, err = cliagent.Command(ctx, cmd, instrument.Turn{}, cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatClaude))
	}()

	// The prompt is stored while the agent runs.
	deadline := time.Now().Add(10 * time.Second)
	for len(rows(t, tp, conn)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no prompt row while the agent runs")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if code != -1 || err == nil {
		t.Errorf("Command = %d, %v; want -1 and an error", code, err)
	}
	rs := rows(t, tp, conn)
	if roles(rs) != "prompt error" || rs[0].content != "long task" || rs[1].errText != "signal: killed: working..." {
		t.Errorf("rows: %v", rs)
	}
}

func hasAttr(s sdktrace.ReadOnlySpan, key, value string) bool {
	for _, a := range s.Attributes() {
		if string(a.Key) == key && a.Value.AsString() == value {
			return true
		}
	}
	return false
}

// A Claude run whose resume session is invalid gets the warning, an error
// row and no tool spans.
func TestCommandClaudeResumeInvalid(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	cmd := agent(context.Background(), t, map[string]string{"FAKE_EXIT": "1", "FAKE_STDERR": "Error: Invalid session ID. Must be a valid UUID."},
		"--resume", "nope", "-p", "go on", "--output-format", "stream-json")
	code, err := cliagent.Command(context.Background(), cmd, instrument.Turn{},
		cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))))
	if code != 1 || err == nil {
		t.Fatalf("Command = %d, %v", code, err)
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Status().Description != "exit status 1: Error: Invalid session ID. Must be a valid UUID." {
		t.Errorf("status = %q", s.Status().Description)
	}
	var got []string
	for _, e := range s.Events() {
		got = append(got, e.Name)
		if e.Name == schema.EventTurn && !(hasKV(e.Attributes, schema.KeyRole, cliagent.KindWarning) && hasKV(e.Attributes, schema.KeyCode, cliagent.CodeSessionResumeInvalid) &&
			hasKV(e.Attributes, schema.KeyRejectedSession, "nope")) {
			t.Errorf("turn event %v is not the resume warning naming the rejected session", e.Attributes)
		}
	}
	if strings.Join(got, " ") != "gen_ai.prompt convtrace.turn exception" {
		t.Errorf("events = %v", got)
	}
}

// The retry of a rejected resume opens with a note naming the refused
// session; a resumed run that fails in words no matcher knows gets a
// warning of its own, so that a new rejection message is noticed.
func TestCommandResumeRetryAndUnknownFailure(t *testing.T) {
	turnCodes := func(opts []cliagent.Option, env map[string]string, args ...string) []string {
		t.Helper()
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		defer tp.Shutdown(context.Background())
		cmd := agent(context.Background(), t, env, args...)
		_, _ = cliagent.Command(context.Background(), cmd, instrument.Turn{},
			append(opts, cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))))...)
		var codes []string
		for _, s := range sr.Ended() {
			for _, e := range s.Events() {
				for _, a := range e.Attributes {
					if string(a.Key) == schema.KeyCode {
						codes = append(codes, a.Value.AsString())
					}
					if string(a.Key) == schema.KeyRejectedSession {
						codes = append(codes, "rejected:"+a.Value.AsString())
					}
				}
			}
		}
		return codes
	}
	retry := turnCodes([]cliagent.Option{cliagent.WithRetryAfterRejected("old-session")},
		map[string]string{"FAKE_TRANSCRIPT": "testdata/claude.jsonl"}, "-p", "go on", "--output-format", "stream-json")
	if len(retry) < 2 || retry[0] != cliagent.CodeResumeRetry || retry[1] != "rejected:old-session" {
		t.Errorf("the retry's codes %v, want %s naming old-session first", retry, cliagent.CodeResumeRetry)
	}
	unknown := turnCodes(nil, map[string]string{"FAKE_EXIT": "1", "FAKE_STDERR": "Error: the moon is in the wrong phase"},
		"--resume", "gone", "-p", "go on", "--output-format", "stream-json")
	if strings.Join(unknown, ",") != cliagent.CodeResumeFailedUnrecognised {
		t.Errorf("a resumed run failing in unknown words: codes %v, want %s", unknown, cliagent.CodeResumeFailedUnrecognised)
	}
	plain := turnCodes(nil, map[string]string{"FAKE_EXIT": "1", "FAKE_STDERR": "Error: the moon is in the wrong phase"},
		"-p", "go on", "--output-format", "stream-json")
	if len(plain) != 0 {
		t.Errorf("a run that resumed nothing got resume codes %v", plain)
	}
}

func hasKV(attrs []attribute.KeyValue, key, value string) bool {
	for _, a := range attrs {
		if string(a.Key) == key && a.Value.AsString() == value {
			return true
		}
	}
	return false
}

// A tool use left without a result ends with the run, and no goroutine
// outlives Command.
func TestCommandUnpairedToolNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	line := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"sleep 99"}}]},"session_id":"s1"}` + "\n"
	if err := os.WriteFile(transcript, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := agent(context.Background(), t, map[string]string{"FAKE_TRANSCRIPT": transcript, "FAKE_EXIT": "2"})
	code, _ := cliagent.Command(context.Background(), cmd, instrument.Turn{Prompt: "p"},
		cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))))
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	spans := sr.Ended()
	if len(spans) != 2 || spans[0].Name() != "execute_tool Bash" || spans[0].Status().Description != "no tool result: the agent ended first" {
		t.Errorf("spans: %v", spans)
	}
}

func TestCommandWithoutContentKeepsEveryTurnEmpty(t *testing.T) {
	tp, _, conn := provider(t)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp), instrument.WithoutContent())
	var stdout bytes.Buffer
	cmd := agent(context.Background(), t, map[string]string{"FAKE_TRANSCRIPT": "testdata/claude.jsonl"},
		"-p", "--output-format", "stream-json", "Why does TestParseConfig fail?")
	cmd.Stdout = &stdout
	if code, err := cliagent.Command(context.Background(), cmd, instrument.Turn{}, cliagent.WithRecorder(rec)); code != 0 || err != nil {
		t.Fatalf("Command = %d, %v", code, err)
	}
	rs := rows(t, tp, conn)
	if len(rs) < 5 {
		t.Fatalf("only %d rows: %s", len(rs), roles(rs))
	}
	// Error rows say what failed; nothing the agent or a tool said remains.
	for _, r := range rs {
		if r.content != "" && r.content != r.errText {
			t.Errorf("%s row keeps content %q with capture off", r.role, r.content)
		}
		if strings.Contains(r.content, "TestParseConfig") {
			t.Errorf("%s row leaks the tool's output: %q", r.role, r.content)
		}
	}
}

// TestCommandClaudeWithoutStreamEvents: a stream-json run without stream
// events (an agent that does not send them) still records a call per
// message, with its input and cache tokens; the output tokens, which only
// the run's result tells, stay on the run's own answer.
func TestCommandClaudeWithoutStreamEvents(t *testing.T) {
	transcript, err := os.ReadFile("testdata/claude.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(transcript), "\n") {
		if !strings.Contains(l, `"type":"stream_event"`) {
			lines = append(lines, l)
		}
	}
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	cmd := exec.Command("printf", "%s", strings.Join(lines, "\n"))
	if _, err := cliagent.Command(context.Background(), cmd, instrument.Turn{Prompt: "p"},
		cliagent.WithRecorder(instrument.NewRecorder(instrument.WithTracerProvider(tp))), cliagent.WithFormat(cliagent.FormatClaude)); err != nil {
		t.Fatal(err)
	}
	var chats int
	var in int64
	for _, s := range sr.Ended() {
		if strings.HasPrefix(s.Name(), "chat ") {
			chats++
			for _, a := range s.Attributes() {
				if string(a.Key) == schema.KeyInputTokens {
					in += a.Value.AsInt64()
				}
			}
		}
	}
	if chats != 3 || in != (4+1200+11000)+(6+300+12200)+(8+12500) {
		t.Errorf("%d chat spans with %d input tokens, want 3 with the messages' input and cache", chats, in)
	}
	run := sr.Ended()[len(sr.Ended())-1]
	if !hasAttr(run, schema.KeyResponseModel, "claude-sonnet-4-5-20250929") || !slices.ContainsFunc(run.Attributes(), func(a attribute.KeyValue) bool {
		return string(a.Key) == schema.KeyOutputTokens && a.Value.AsInt64() == 123
	}) {
		t.Errorf("the run's answer does not keep the result's 123 output tokens: %v", run.Attributes())
	}
}
