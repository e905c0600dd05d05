package agentcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// runTurn is one stored turn of a convtrace run.
type runTurn struct {
	role, tool, content, model, session, status, costSource string
	in, out, cacheRead, cacheWrite, reasoning               string
	cost                                                    float64
}

func (r runTurn) String() string {
	return fmt.Sprintf("%s|%s|%s|in=%s out=%s cr=%s cw=%s rs=%s|%s|%.40q", r.role, r.tool, r.model, r.in, r.out, r.cacheRead, r.cacheWrite, r.reasoning, r.session, r.content)
}

// threadTurns reads a thread's stored turns in order.
func threadTurns(t *testing.T, conn driver.Conn, thread string) []runTurn {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
SELECT role, tool_name, content, model, session_id, status, cost_source,
       ifNull(toString(tokens_in), ''), ifNull(toString(tokens_out), ''), ifNull(toString(tokens_cache_read), ''),
       ifNull(toString(tokens_cache_write), ''), ifNull(toString(tokens_reasoning), ''), ifNull(cost_usd, 0)
FROM conversations FINAL WHERE thread_id = ? ORDER BY start_ns, seq`, thread)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []runTurn
	for rows.Next() {
		var r runTurn
		if err := rows.Scan(&r.role, &r.tool, &r.content, &r.model, &r.session, &r.status, &r.costSource,
			&r.in, &r.out, &r.cacheRead, &r.cacheWrite, &r.reasoning, &r.cost); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// priced checks that a call's cost is what the price table makes of its
// tokens.
func priced(t *testing.T, c runTurn) {
	t.Helper()
	n := func(s string) *uint32 {
		var v uint32
		if _, err := fmt.Sscan(s, &v); err != nil {
			return nil
		}
		return &v
	}
	p, ok := pricing.DefaultPrices().Lookup(c.model)
	if !ok {
		t.Fatalf("model %q not in the price table", c.model)
	}
	want := p.Cost(pricing.Usage{In: n(c.in), Out: n(c.out), CacheRead: n(c.cacheRead), CacheWrite: n(c.cacheWrite), Reasoning: n(c.reasoning)})
	if c.costSource != "priced" || math.Abs(c.cost-want) > 1e-12 {
		t.Errorf("call %s: cost %v (%s), want %v priced from its tokens", c, c.cost, c.costSource, want)
	}
}

// calls returns the turns that count a provider call.
func calls(turns []runTurn) []runTurn {
	var out []runTurn
	for _, r := range turns {
		if r.costSource != "" {
			out = append(out, r)
		}
	}
	return out
}

// answered counts the requests the fake provider answered as a model
// (the tool call and the final text), side requests left out.
func answered(p *FakeProvider) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Kind == "tool_call" || r.Kind == "final" {
			n++
		}
	}
	return n
}

// runFixture is what a CLI run under convtrace run needs: a store, a data
// folder, the fake provider, the agent's home (kept across a resume), and
// a collector on the same store for the agent's own telemetry.
type runFixture struct {
	conn      *topology.Conn
	dsn, data string
	in        *collector.Ingester
	otlp      string
	p         *FakeProvider
	home      string
}

func newRunFixture(t *testing.T) *runFixture {
	requireCLIs(t)
	f := &runFixture{data: t.TempDir(), home: t.TempDir(), p: NewFakeProvider(DefaultScript)}
	t.Cleanup(f.p.Close)
	f.conn, f.dsn = testkit.Open(t)
	f.in, f.otlp = collectorOn(t, f.dsn)
	return f
}

// options returns the options of a CLI run against p wrapped in convtrace
// run, with flags before the --.
func (f *runFixture) options(t *testing.T, p *FakeProvider, home string, flags ...string) RunOptions {
	wrap := append([]string{testkit.Binary(t), "run", "--clickhouse", f.dsn, "--data", f.data}, flags...)
	return RunOptions{ProviderURL: p.URL(), OTLPEndpoint: f.otlp, Home: home, Prompt: ScenarioPrompt,
		Timeout: 3 * time.Minute, Wrap: append(wrap, "--")}
}

// failureStoredOnce runs a CLI (run) under convtrace run against a provider
// that answers 400, in thread, and checks the run fails and its error is
// stored once, with the provider's message, and no made-up answer.
func (f *runFixture) failureStoredOnce(t *testing.T, thread string, streamJSON bool, run func(context.Context, RunOptions) (*RunResult, error)) {
	t.Helper()
	fail := NewFakeProvider(Script{FailStatus: 400, FailMessage: "fake provider refuses: prompt too long"})
	defer fail.Close()
	o := f.options(t, fail, t.TempDir(), "--thread", thread)
	o.StreamJSON = streamJSON
	if res, _ := run(context.Background(), o); res == nil || res.ExitCode == 0 {
		t.Fatalf("a run whose provider fails exits 0")
	}
	turns := threadTurns(t, f.conn, thread)
	var errs int
	for _, r := range turns {
		if r.model == "<synthetic>" || (r.role == "response" && strings.Contains(r.content, "400")) {
			t.Errorf("a made-up answer stored: %s", r)
		}
		if r.role == "error" {
			errs++
			if !strings.Contains(r.content, "prompt too long") {
				t.Errorf("error turn without the provider's message: %s", r)
			}
		}
	}
	if errs != 1 {
		t.Errorf("%d error turns, want 1:\n%s", errs, dump(turns))
	}
}

func dump(turns []runTurn) string {
	var b strings.Builder
	for _, r := range turns {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// TestRunClaudeCallByCall runs the real Claude Code under convtrace run
// against the fake provider and compares, call by call, what the provider
// answered with what is stored: each Messages request its own call with
// its model and tokens of every kind, the tool call and result between
// them, the prompt with a list flag after it, the session on every turn,
// the thread attribute; then a plain --resume of that session, with no
// --thread, lands in the same thread; a failing provider is stored once,
// as the run's error.
func TestRunClaudeCallByCall(t *testing.T) {
	// The CLI's own telemetry goes to a collector on the same store: the
	// run records the calls, the telemetry must not record them again.
	f := newRunFixture(t)
	conn, p := f.conn, f.p
	o := f.options(t, p, f.home, "--thread", "claude-run", "--attr", "task=T-7")
	o.StreamJSON, o.Model = true, "claude-sonnet-4-5"
	o.ExtraArgs = []string{"--allowedTools", "Bash", "Read"} // a list flag after the prompt
	res, err := RunClaude(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\nstdout: %s", err, res.Stdout)
	}
	if bytes.Contains(res.Stdout, []byte(`"type":"stream_event"`)) || !bytes.Contains(res.Stdout, []byte(`"type":"assistant"`)) {
		t.Errorf("stdout is not what the caller asked for (stream-json without stream events):\n%s", res.Stdout)
	}
	if !strings.Contains(string(res.Stderr), "recorded in thread claude-run") {
		t.Errorf("the run does not say where it was recorded: %s", res.Stderr)
	}
	turns := threadTurns(t, conn, "claude-run")
	t.Logf("stored:\n%s", dump(turns))
	got := calls(turns)
	want := []struct{ in, out, cacheRead, cacheWrite, tool, text string }{
		{"1600", "40", "300", "100", "Bash", ""},
		{"2300", "25", "800", "0", "", "done: hello"},
	}
	if n := answered(p); len(got) != n || n != len(want) {
		t.Fatalf("%d calls stored, the provider answered %d, want %d:\n%s", len(got), n, len(want), dump(turns))
	}
	for i, w := range want {
		c := got[i]
		if c.in != w.in || c.out != w.out || c.cacheRead != w.cacheRead || c.cacheWrite != w.cacheWrite || c.tool != w.tool ||
			!strings.Contains(c.content, w.text) || c.model != o.Model || c.session != res.SessionID || c.status != "ok" {
			t.Errorf("call %d: %s\nwant in=%s out=%s cache %s/%s tool %q text %q model %s session %s", i+1, c, w.in, w.out, w.cacheRead, w.cacheWrite, w.tool, w.text, o.Model, res.SessionID)
		}
		priced(t, c)
	}
	var roles []string
	for _, r := range turns {
		roles = append(roles, r.role)
		if r.session != res.SessionID {
			t.Errorf("%s turn without the session %s: %s", r.role, res.SessionID, r)
		}
	}
	if w := "prompt system response tool_call tool_result response"; strings.Join(roles, " ") != w {
		t.Errorf("turns:\n got %s\nwant %s\n%s", strings.Join(roles, " "), w, dump(turns))
	}
	if turns[0].content != ScenarioPrompt {
		t.Errorf("prompt %q, want %q (a list flag after it)", turns[0].content, ScenarioPrompt)
	}
	if r := turns[4]; r.content != "hello" || r.tool != "Bash" {
		t.Errorf("tool result: %s", r)
	}
	h := viewer.New(conn).Handler()
	if body := apiGet(t, h, "/api/threads?attr.task=T-7"); !strings.Contains(body, `"claude-run"`) {
		t.Errorf("attr.task=T-7 does not find the run's thread: %s", body)
	}

	// A plain --resume of the session, no --thread: the thread that holds
	// the session.
	o = f.options(t, p, f.home)
	o.StreamJSON, o.ResumeSessionID, o.Prompt = true, res.SessionID, ResumePrompt
	o.LeadArgs = []string{"--allowedTools", "Bash", "Read"} // a list flag before the prompt
	res2, err := RunClaude(context.Background(), o)
	if err != nil {
		t.Fatalf("resumed run: %v\nstdout: %s", err, res2.Stdout)
	}
	if !strings.Contains(string(res2.Stderr), "recorded in thread claude-run") {
		t.Errorf("the resumed run went elsewhere: %s", res2.Stderr)
	}
	resumed := threadTurns(t, conn, "claude-run")
	if n := len(calls(resumed)); n != answered(p) {
		t.Errorf("%d calls in the thread after the resume, the provider answered %d", n, answered(p))
	}
	var prompts []string
	for _, r := range resumed {
		if r.role == "prompt" {
			prompts = append(prompts, r.content)
		}
	}
	if len(prompts) != 2 || prompts[1] != ResumePrompt {
		t.Errorf("prompts %q, want the resumed run's %q second (a list flag before it)", prompts, ResumePrompt)
	}
	// Its own telemetry arrived, and added no call: each is stored once.
	ownTelemetryAddsNothing(t, f.in, conn, answered(p))

	// A failing provider: the run fails, its error stored once with the
	// provider's message, no made-up answer or model.
	f.failureStoredOnce(t, "claude-fail", true, RunClaude)
}

// TestRunCodexCallByCall runs the real Codex under convtrace run. Codex's
// JSON reports usage per turn (one exec), not per request, so a turn is
// its finest honest unit: one call with the turn's tokens of every kind,
// reasoning included, and the model of -m. Its non-fatal error items are
// warnings; --resume with exec flags works and counts only its own turn;
// a failing provider is stored once, with the provider's message.
func TestRunCodexCallByCall(t *testing.T) {
	f := newRunFixture(t)
	conn, p := f.conn, f.p
	o := f.options(t, p, f.home, "--thread", "codex-run")
	o.ExtraArgs = []string{"-s", "danger-full-access", "-m", "gpt-5"}
	res, err := RunCodex(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\nstdout: %s\nstderr: %s", err, res.Stdout, res.Stderr)
	}
	// What the provider charged for the requests since the last check.
	seen := 0
	charged := func() Usage {
		var u Usage
		reqs := p.Requests()
		for _, r := range reqs[seen:] {
			var c Usage
			switch r.Kind {
			case "tool_call":
				c = DefaultScript.ToolUsage
			case "final":
				c = DefaultScript.FinalUsage
			}
			u.Input, u.Output, u.CacheRead, u.Reasoning = u.Input+c.Input, u.Output+c.Output, u.CacheRead+c.CacheRead, u.Reasoning+c.Reasoning
		}
		seen = len(reqs)
		return u
	}
	check := func(turns []runTurn, what string) {
		t.Helper()
		want := charged()
		got := calls(turns)
		if len(got) != 1 {
			t.Fatalf("%s: %d calls, want the turn's 1:\n%s", what, len(got), dump(turns))
		}
		c := got[0]
		if c.in != fmt.Sprint(want.Input) || c.out != fmt.Sprint(want.Output) || c.cacheRead != fmt.Sprint(want.CacheRead) ||
			c.reasoning != fmt.Sprint(want.Reasoning) || c.model != "gpt-5" || c.status != "ok" || !strings.Contains(c.content, "done: hello") {
			t.Errorf("%s: call %s\nwant in=%d out=%d cache=%d reasoning=%d model gpt-5", what, c, want.Input, want.Output, want.CacheRead, want.Reasoning)
		}
		priced(t, c)
		for _, r := range turns {
			if r.role == "error" || r.status == "error" {
				t.Errorf("%s: a successful run with an error turn: %s", what, r)
			}
		}
	}
	first := threadTurns(t, conn, "codex-run")
	t.Logf("stored:\n%s", dump(first))
	check(first, "first run")

	// --resume with exec flags: codex exec FLAGS resume ID PROMPT.
	o = f.options(t, p, f.home, "--thread", "codex-run", "--resume")
	o.ExtraArgs, o.Prompt = []string{"-s", "danger-full-access", "-m", "gpt-5"}, ResumePrompt
	res2, err := RunCodex(context.Background(), o)
	if err != nil {
		t.Fatalf("resumed run: %v\nstdout: %s\nstderr: %s", err, res2.Stdout, res2.Stderr)
	}
	if res2.SessionID != res.SessionID {
		t.Errorf("the resumed run's session %q, want %q", res2.SessionID, res.SessionID)
	}
	all := threadTurns(t, conn, "codex-run")
	check(all[len(first):], "resumed run")

	// Its own telemetry arrived, and added no call: the 2 runs' turns.
	ownTelemetryAddsNothing(t, f.in, conn, 2)

	// A session Codex does not know: --resume is refused, the run is tried
	// again without it, that retry says so, and the refused session stops
	// being the thread's current one.
	const bogus = "0199ffff-0000-7000-8000-00000000dead"
	codexProvider := cliagent.ResumeProvider([]string{"codex"})
	testkit.InsertTurns(t, conn, schema.Turn{TurnID: "bogus:response:1", SpanID: "bogus", ThreadID: "codex-run", Project: "default",
		Role: schema.RoleResponse, Provider: codexProvider, SessionID: bogus, StartNS: uint64(time.Now().UnixNano())})
	if cur, err := store.CurrentSession(context.Background(), conn, "codex-run", codexProvider); err != nil || cur != bogus {
		t.Fatalf("the thread's current session %q, %v; want the bogus one set up", cur, err)
	}
	res3, err := RunCodex(context.Background(), o)
	if err != nil {
		t.Fatalf("run resuming a session Codex does not know: %v\nstdout: %s\nstderr: %s", err, res3.Stdout, res3.Stderr)
	}
	if !strings.Contains(string(res3.Stderr), "running it again without resuming") {
		t.Errorf("no retry without resuming; stderr:\n%s", res3.Stderr)
	}
	codes := strings.Join(testkit.Strings(t, conn, `SELECT attributes.value[indexOf(attributes.key, 'convtrace.code')] FROM conversations
WHERE thread_id = 'codex-run' AND role = 'warning' ORDER BY start_ns`), ",")
	if !strings.Contains(codes, cliagent.CodeSessionResumeInvalid) || !strings.Contains(codes, cliagent.CodeResumeRetry) {
		t.Errorf("warnings of the thread %q, want the refusal and the retry's note", codes)
	}
	if cur, err := store.CurrentSession(context.Background(), conn, "codex-run", codexProvider); err != nil || cur == bogus {
		t.Errorf("after Codex refused it, the thread's current session is still %q (%v)", cur, err)
	}

	f.failureStoredOnce(t, "codex-fail", false, RunCodex)
}

// collectorOn serves an OTLP/HTTP receiver storing in the database at dsn,
// with a join window of a second, and returns its ingester and URL.
func collectorOn(t *testing.T, dsn string) (*collector.Ingester, string) {
	t.Helper()
	in, err := collector.NewIngester(dsn, collector.WithJoinWindow(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Shutdown(context.Background()) })
	srv := httptest.NewServer(otlpreceiver.NewHTTPHandler(in))
	t.Cleanup(srv.Close)
	return in, srv.URL
}

// ownTelemetryAddsNothing waits for an agent's own telemetry to reach in,
// then for its join window, and checks the store holds calls calls in all:
// a run's agent's records are taken, not stored.
func ownTelemetryAddsNothing(t *testing.T, in *collector.Ingester, conn driver.Conn, calls int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); in.Stats().LogsIgnored == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if in.Stats().LogsIgnored == 0 {
		t.Fatalf("the agent's own telemetry never arrived: %+v", in.Stats())
	}
	time.Sleep(3 * time.Second) // past the join window
	var all uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations FINAL WHERE cost_source != ''").Scan(&all); err != nil || all != uint64(calls) {
		t.Errorf("%d calls stored in all, want %d (%v)", all, calls, err)
	}
}

// apiGet answers a GET of the viewer's API as a local client.
func apiGet(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1"
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return rec.Body.String()
}
