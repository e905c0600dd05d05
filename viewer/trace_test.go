package viewer_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// traceSpan returns a finished span of trace-th1 lasting secs seconds.
func traceSpan(id, parent, name string, start, secs int) schema.Span {
	return schema.Span{
		TraceID: "trace-th1", SpanID: id, ParentSpanID: parent, Project: "proj", ThreadID: "th1",
		Name: name, Kind: "internal", StartNS: at(start), DurationNS: uint64(secs) * uint64(time.Second),
		Status: schema.StatusOK,
	}
}

// traceFixture stores trace-th1:
//
//	root (0–10 s)
//	├ plan (1–4 s)
//	│ └ chat claude (1–3 s, an LLM call with usage and cost, delivered twice)
//	├ execute (5–9 s, failed)
//	└ chat gpt (8 s, still running: only its prompt is stored)
//	orphan (2–3 s, parent not in the trace)
//
// and a second trace, other-trace, that must not leak into it.
func traceFixture(t *testing.T) http.Handler {
	t.Helper()
	h, conn := newServer(t)
	llm := traceSpan("llm", "plan", "chat claude", 1, 2)
	llm.Provider, llm.Model, llm.Operation, llm.Speaker, llm.Phase = "anthropic", "claude-sonnet-4-5", "chat", "planner", "plan"
	llm.TokensIn, llm.TokensOut, llm.CostUSD = u32(100), u32(50), f64(0.25)
	failed := traceSpan("exec", "root", "execute", 5, 4)
	failed.Status, failed.StatusMsg = schema.StatusError, "tool crashed: exit 2"
	other := traceSpan("o1", "", "other", 0, 1)
	other.TraceID = "other-trace"
	testkit.InsertSpans(t, conn, traceSpan("root", "", "pipeline", 0, 10), traceSpan("plan", "root", "plan", 1, 3), llm, failed,
		traceSpan("orphan", "missing", "orphan", 2, 1), other)
	testkit.InsertSpans(t, conn, llm) // delivered again

	p, r := call("th1", "llm", "plan", 0, "planner", "anthropic", "claude-sonnet-4-5", 1, "write a plan", "1. fix it")
	p.ParentSpanID, r.ParentSpanID = "plan", "plan"
	r.TokensIn, r.TokensOut, r.CostUSD = u32(100), u32(50), f64(0.25)
	run, _ := call("th1", "run", "execute", 0, "executor", "openai", "gpt-5", 8, "go on", "")
	run.ParentSpanID = "root"
	testkit.InsertTurns(t, conn, p, r, beating(run))
	testkit.InsertTurns(t, conn, r) // delivered again
	return h
}

func TestTraceAPINestsSpans(t *testing.T) {
	h := traceFixture(t)
	var tr viewer.Trace
	getJSON(t, h, "/api/traces/trace-th1", http.StatusOK, &tr)

	var got []string
	for _, sp := range tr.Spans {
		got = append(got, fmt.Sprintf("%s@%d", sp.SpanID, sp.Depth))
	}
	want := "root@0 plan@1 llm@2 exec@1 run@1 orphan@0"
	if strings.Join(got, " ") != want {
		t.Errorf("spans in order with depth = %q, want %q", strings.Join(got, " "), want)
	}
	if tr.SpanCount != 6 || len(tr.Spans) != 6 {
		t.Errorf("span count = %d (%d spans), want 6: a span delivered twice counts once", tr.SpanCount, len(tr.Spans))
	}
	if tr.DurationNS != uint64(10*time.Second) || tr.StartNS != at(0) {
		t.Errorf("trace start %d, duration %d; want %d, 10 s", tr.StartNS, tr.DurationNS, at(0))
	}
	if tr.TokensIn == nil || *tr.TokensIn != 100 || tr.TokensOut == nil || *tr.TokensOut != 50 || tr.CostUSD == nil || *tr.CostUSD != 0.25 {
		t.Errorf("trace usage in %v out %v cost %v, want 100, 50, 0.25 (the duplicate counted once)", tr.TokensIn, tr.TokensOut, tr.CostUSD)
	}
	if strings.Join(tr.ThreadIDs, ",") != "th1" {
		t.Errorf("thread ids = %q, want th1", tr.ThreadIDs)
	}

	byID := map[string]viewer.TraceSpan{}
	for _, sp := range tr.Spans {
		byID[sp.SpanID] = sp
	}
	tests := []struct {
		id   string
		desc string
		ok   func(viewer.TraceSpan) bool
	}{
		{"llm", "an LLM call with its model, tokens and cost, 2 turns", func(s viewer.TraceSpan) bool {
			return s.LLM && s.Model == "claude-sonnet-4-5" && *s.TokensIn == 100 && *s.TokensOut == 50 && *s.CostUSD == 0.25 && s.Turns == 2
		}},
		{"root", "not an LLM call, no usage", func(s viewer.TraceSpan) bool {
			return !s.LLM && s.TokensIn == nil && s.CostUSD == nil && !s.Failed && !s.Running
		}},
		{"exec", "failed with its status message", func(s viewer.TraceSpan) bool {
			return s.Failed && s.Status == "error" && s.StatusMessage == "tool crashed: exit 2"
		}},
		{"run", "running, drawn to the trace's end, an LLM call of unknown usage", func(s viewer.TraceSpan) bool {
			return s.Running && s.StartNS == at(8) && s.DurationNS == uint64(2*time.Second) && s.LLM && s.Model == "gpt-5" && s.TokensIn == nil
		}},
		{"orphan", "kept at top level", func(s viewer.TraceSpan) bool { return s.Depth == 0 && s.ParentSpanID == "missing" }},
	}
	for _, tt := range tests {
		if got := byID[tt.id]; !tt.ok(got) {
			t.Errorf("span %s = %+v, want %s", tt.id, got, tt.desc)
		}
	}
}

func TestTracePage(t *testing.T) {
	h := traceFixture(t)
	res := get(t, h, "/traces/trace-th1")
	if res.status != http.StatusOK {
		t.Fatalf("GET /traces/trace-th1: status %d, body:\n%s", res.status, res.body)
	}
	page := res.body
	tests := []struct {
		desc, want string
	}{
		{"the root's bar spans the whole trace", `<rect class="wf-bar" x="0.000%" width="100.000%"`},
		{"the LLM call's bar starts at 10% and lasts 20%", `<rect class="wf-bar" x="10.000%" width="20.000%"`},
		{"the running call is drawn to the end", `<rect class="wf-bar" x="80.000%" width="20.000%"`},
		{"nesting shown as indent", `class="wf-label depth-2"`},
		{"the LLM call's model", `<span class="badge model">claude-sonnet-4-5</span>`},
		{"the LLM call's tokens and cost", `in 100 · out 50 · $0.25`},
		{"unknown usage as —", `in — · out — · —`},
		{"the failed span marked", `class="wf-row span ph-none span-error"`},
		{"the failed span's message", `<span class="status-msg">tool crashed: exit 2</span>`},
		{"the running span marked", `<span class="pill running">running</span>`},
		{"a span opens its detail", `href="?span=llm#detail-pane" data-span="llm" data-detail="/traces/trace-th1/spans/llm/detail"`},
		{"the thread link", `<a href="/threads/th1">th1</a>`},
		{"the span count", `6 spans`},
		{"the total tokens", `150 tokens`},
		{"the total duration", `10s`},
		{"an axis label", `text-anchor="end">10s</text>`},
		{"no span selected", `<aside id="detail-pane" class="detail-pane" aria-label="span detail" tabindex="-1" hidden>`},
	}
	for _, tt := range tests {
		if !strings.Contains(page, tt.want) {
			t.Errorf("%s: page lacks %q", tt.desc, tt.want)
		}
	}
	if strings.Contains(page, "other") {
		t.Errorf("page shows a span of another trace:\n%s", page)
	}
	if c := strings.Count(page, `class="wf-bar"`); c != 6 {
		t.Errorf("page has %d bars, want 6", c)
	}
}

func TestTracePageSelectedSpan(t *testing.T) {
	h := traceFixture(t)
	res := get(t, h, "/traces/trace-th1?span=llm")
	if res.status != http.StatusOK {
		t.Fatalf("status %d, body:\n%s", res.status, res.body)
	}
	for _, want := range []string{
		`href="?span=llm#detail-pane" data-span="llm" data-detail="/traces/trace-th1/spans/llm/detail" aria-current="true"`,
		"<pre class=\"detail-text\">\nwrite a plan</pre>",
		"<pre class=\"detail-text\">\n1. fix it</pre>",
		`href="/threads/th1#llm:prompt:0"`,
		`href="/threads/th1#llm:response:1"`,
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("GET /traces/trace-th1?span=llm lacks %q", want)
		}
	}
	if c := strings.Count(res.body, `<div class="detail-turn`); c != 2 {
		t.Errorf("selected span lists %d turns, want 2 (the response delivered twice shows once)", c)
	}
	if res := get(t, h, "/traces/trace-th1?span=nope"); res.status != http.StatusBadRequest || !strings.Contains(res.body, "span:") {
		t.Errorf("unknown span: status %d, want 400 naming span; body:\n%s", res.status, res.body)
	}
	if res := get(t, h, "/traces/trace-th1?span=llm&all=maybe"); res.status != http.StatusBadRequest || !strings.Contains(res.body, "all:") {
		t.Errorf("bad all: status %d, want 400 naming all; body:\n%s", res.status, res.body)
	}
}

func TestSpanTurnsAPI(t *testing.T) {
	h := traceFixture(t)
	var got struct {
		TraceID string            `json:"trace_id"`
		SpanID  string            `json:"span_id"`
		Turns   []viewer.SpanTurn `json:"turns"`
	}
	getJSON(t, h, "/api/traces/trace-th1/spans/llm/turns", http.StatusOK, &got)
	var ids []string
	for _, tu := range got.Turns {
		ids = append(ids, tu.TurnID+"→"+tu.URL)
	}
	want := "llm:prompt:0→/threads/th1#llm:prompt:0 llm:response:1→/threads/th1#llm:response:1"
	if strings.Join(ids, " ") != want {
		t.Errorf("turns of span llm = %q, want %q", strings.Join(ids, " "), want)
	}
	getJSON(t, h, "/api/traces/trace-th1/spans/root/turns", http.StatusOK, &got)
	if len(got.Turns) != 0 {
		t.Errorf("turns of span root = %v, want none", got.Turns)
	}
	var e struct{ Error string }
	getJSON(t, h, "/api/traces/nope/spans/llm/turns", http.StatusNotFound, &e)
}

func TestSpanTurnContent(t *testing.T) {
	h, conn := newServer(t)
	long := strings.Repeat("가", 2500)
	p, r := call("th1", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, long, "ok")
	jp, jr := call("th1", "s2", "plan", 0, "planner", "openai", "gpt-5", 2,
		`[{"role":"system","content":"be brief"},{"role":"user","content":"fix <b>it</b>"}]`, "done")
	testkit.InsertTurns(t, conn, p, r, jp, jr)
	var got struct{ Turns []viewer.SpanTurn }
	getJSON(t, h, "/api/traces/trace-th1/spans/s1/turns", http.StatusOK, &got)
	if len(got.Turns) != 2 {
		t.Fatalf("turns = %v, want prompt and response", got.Turns)
	}
	if c := got.Turns[0].Content; c != strings.Repeat("가", 2000) || !got.Turns[0].ContentCut {
		t.Errorf("long prompt: %d runes, cut %v; want 2000 runes, cut", len([]rune(c)), got.Turns[0].ContentCut)
	}
	if got.Turns[1].Content != "ok" || got.Turns[1].ContentCut || len(got.Turns[1].Messages) != 0 {
		t.Errorf("short response: %q, cut %v, messages %v; want ok, not cut, no messages", got.Turns[1].Content, got.Turns[1].ContentCut, got.Turns[1].Messages)
	}

	getJSON(t, h, "/api/traces/trace-th1/spans/s2/turns", http.StatusOK, &got)
	if msgs := fmt.Sprint(got.Turns[0].Messages); msgs != "[{system be brief} {user fix <b>it</b>}]" {
		t.Errorf("messages JSON prompt read as %s, want the system and the user message", msgs)
	}
	res := get(t, h, "/traces/trace-th1?span=s2")
	if want := `<span class="msg-role">user</span><pre class="detail-text">` + "\nfix &lt;b&gt;it&lt;/b&gt;</pre>"; !strings.Contains(res.body, want) {
		t.Errorf("page of span s2 lacks the user message %q:\n%s", want, res.body)
	}
}

func TestTraceNotFound(t *testing.T) {
	h, _ := newServer(t)
	if res := get(t, h, "/traces/nope"); res.status != http.StatusNotFound || !strings.Contains(res.body, "No trace has the id nope") {
		t.Errorf("GET /traces/nope: status %d, want 404 page; body:\n%s", res.status, res.body)
	}
	var e struct{ Error string }
	getJSON(t, h, "/api/traces/nope", http.StatusNotFound, &e)
	if e.Error != "trace not found" {
		t.Errorf("error = %q, want trace not found", e.Error)
	}
}

func TestTraceEscapesHostileText(t *testing.T) {
	h, conn := newServer(t)
	for i, bad := range escapeProbes {
		id := fmt.Sprintf("s%d", i)
		sp := traceSpan(id, "", bad, i, 1)
		sp.Model, sp.Speaker, sp.Phase, sp.StatusMsg, sp.Status, sp.ThreadID = bad, bad, bad, bad, schema.StatusError, bad
		sp.Kind, sp.Attributes, sp.Resource = bad, []schema.Attr{{Key: bad, Value: bad}}, []schema.Attr{{Key: bad, Value: bad}}
		sp.EventNames, sp.EventTimesNS = []string{bad}, []uint64{at(i)}
		testkit.InsertSpans(t, conn, sp)
		p, r := call(bad, id, bad, 0, bad, "openai", bad, i, bad, bad)
		p.TraceID, r.TraceID = "trace-th1", "trace-th1"
		testkit.InsertTurns(t, conn, p, r)
	}
	for _, path := range []string{"/traces/trace-th1", "/traces/trace-th1?span=s0", "/traces/trace-th1?span=s1", "/traces/trace-th1?span=s2",
		"/traces/trace-th1/spans/s0/detail"} {
		res := get(t, h, path)
		if res.status != http.StatusOK {
			t.Fatalf("GET %s: status %d; body:\n%s", path, res.status, res.body)
		}
		assertProbesEscaped(t, "GET "+path, res)
	}
	// The detail of the spans holding the other probes: none as markup.
	for _, path := range []string{"/traces/trace-th1/spans/s1/detail", "/traces/trace-th1/spans/s2/detail"} {
		body := get(t, h, path).body
		for _, m := range probeMarkup {
			if strings.Contains(body, m) {
				t.Errorf("GET %s holds %q unescaped", path, m)
			}
		}
		if !strings.Contains(body, "&lt;img src=x") && !strings.Contains(body, "javascript:alert(1)") {
			t.Errorf("GET %s does not show its probe", path)
		}
	}
}

// A span without a thread is stored with its trace id as thread: the trace
// links only threads that have a page.
func TestTraceThreads(t *testing.T) {
	h, conn := newServer(t)
	root := traceSpan("root", "", "pipeline", 0, 10)
	root.ThreadID = root.TraceID
	other := traceSpan("other", "root", "side job", 1, 1)
	other.ThreadID = "th2"
	testkit.InsertSpans(t, conn, root, traceSpan("llm", "root", "chat", 2, 1), other)
	p, r := call("th1", "llm", "plan", 0, "planner", "openai", "gpt-5", 2, "q", "a")
	testkit.InsertTurns(t, conn, p, r)
	var tr viewer.Trace
	getJSON(t, h, "/api/traces/trace-th1", http.StatusOK, &tr)
	if got := strings.Join(tr.ThreadIDs, ","); got != "th1,th2" {
		t.Errorf("thread ids = %q, want th1,th2 and not the trace id", got)
	}
}

// Turns without span rows (stored by an older collector, or a call that
// has not ended) still draw: a span per call, from its prompt to its answer.
func TestTraceFromTurnsOnly(t *testing.T) {
	h, conn := newServer(t)
	p1, r1 := call("th1", "c1", "plan", 0, "planner", "openai", "gpt-5", 0, "q1", "a1")
	p2, r2 := call("th1", "c2", "review", 0, "reviewer", "anthropic", "claude", 2, "q2", "a2")
	r2.Role, r2.TurnID, r2.Status, r2.Error = schema.RoleError, schema.ResponseTurnID("c2", true), schema.StatusError, "overloaded"
	testkit.InsertTurns(t, conn, p1, r1, p2, r2)
	var tr viewer.Trace
	getJSON(t, h, "/api/traces/trace-th1", http.StatusOK, &tr)
	var got []string
	for _, sp := range tr.Spans {
		got = append(got, fmt.Sprintf("%s %q %s running=%v failed=%v %q", sp.SpanID, sp.Name, time.Duration(sp.DurationNS), sp.Running, sp.Failed, sp.StatusMessage))
	}
	want := []string{`c1 "chat gpt-5" 1s running=false failed=false ""`, `c2 "chat claude" 1s running=false failed=true "overloaded"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || tr.DurationNS != uint64(3*time.Second) {
		t.Errorf("spans of a trace of turns only, over %s:\n%s\nwant over 3s:\n%s", time.Duration(tr.DurationNS), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
