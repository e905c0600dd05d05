package viewer_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// interruptedFixture stores thread th-int, whose calls have not ended
// except "done", all started ten minutes ago (the default threshold is 5):
//
//	stale   its last heartbeat 6 minutes ago: interrupted
//	fresh   a first pending row beating 8 minutes ago and a refresh 10 s
//	        ago, in separate inserts: running (the newest heartbeat decides)
//	silent  no heartbeat at all: interrupted
//	young   started 10 s ago, no heartbeat yet: running
//	tool    a tool call beating 7 minutes ago: interrupted
//	done    answered long ago: neither
func interruptedFixture(t *testing.T) (http.Handler, func(...viewer.Option) http.Handler) {
	h, conn := newServer(t)
	const th = "th-int"
	now := time.Now()
	ago := func(d time.Duration) uint64 { return uint64(now.Add(-d).UnixNano()) }
	prompt := func(span, text string, startAgo, beatAgo time.Duration) schema.Turn {
		p, _ := call(th, span, "plan", 0, "planner", "openai", "gpt-5", 0, text, "")
		p.StartNS = ago(startAgo)
		if beatAgo > 0 {
			p.HeartbeatNS = ago(beatAgo)
		}
		return p
	}
	freshOld := prompt("fresh", "fresh prompt", 10*time.Minute, 8*time.Minute)
	tool := schema.Turn{TurnID: "tool:tool_call:0", TraceID: "trace-" + th, SpanID: "tool", Project: "proj", ThreadID: th,
		Role: schema.RoleToolCall, Operation: schema.OperationExecuteTool, ToolName: "grep", Content: "grep -r TODO",
		StartNS: ago(10 * time.Minute), HeartbeatNS: ago(7 * time.Minute)}
	dp, dr := call(th, "done", "plan", 0, "planner", "openai", "gpt-5", 0, "done prompt", "the answer")
	dp.StartNS, dr.StartNS = ago(10*time.Minute), ago(9*time.Minute)
	testkit.InsertTurns(t, conn, prompt("stale", "stale prompt kept", 10*time.Minute, 6*time.Minute), freshOld,
		prompt("silent", "silent prompt", 10*time.Minute, 0), prompt("young", "young prompt", 10*time.Second, 0), tool, dp, dr)
	freshNew := freshOld
	freshNew.HeartbeatNS = ago(10 * time.Second)
	testkit.InsertTurns(t, conn, freshNew)

	return h, func(opts ...viewer.Option) http.Handler { return viewer.New(conn, opts...).Handler() }
}

// callStates maps each turn of th-int the API returns to "running",
// "interrupted" or "".
func callStates(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	var got turnsBody
	getJSON(t, h, "/api/threads/th-int/turns", http.StatusOK, &got)
	states := map[string]string{}
	for _, turn := range got.Turns {
		switch {
		case turn.Running && turn.Interrupted:
			states[turn.TurnID] = "both"
		case turn.Running:
			states[turn.TurnID] = "running"
		case turn.Interrupted:
			states[turn.TurnID] = "interrupted"
		default:
			states[turn.TurnID] = ""
		}
	}
	return states
}

func TestTurnsAPIInterrupted(t *testing.T) {
	h, with := interruptedFixture(t)
	tests := []struct {
		name    string
		h       http.Handler
		want    map[string]string
		content string
	}{
		{"default threshold, 5 minutes", h, map[string]string{
			"stale:prompt:0": "interrupted", "fresh:prompt:0": "running", "silent:prompt:0": "interrupted",
			"young:prompt:0": "running", "tool:tool_call:0": "interrupted", "done:prompt:0": "", "done:response:1": "",
		}, "stale prompt kept"},
		{"--interrupted-after 1h", with(viewer.WithInterruptedAfter(time.Hour)), map[string]string{
			"stale:prompt:0": "running", "fresh:prompt:0": "running", "silent:prompt:0": "running",
			"young:prompt:0": "running", "tool:tool_call:0": "running", "done:prompt:0": "", "done:response:1": "",
		}, "stale prompt kept"},
		{"--interrupted-after 5s", with(viewer.WithInterruptedAfter(5 * time.Second)), map[string]string{
			"stale:prompt:0": "interrupted", "fresh:prompt:0": "interrupted", "silent:prompt:0": "interrupted",
			"young:prompt:0": "interrupted", "tool:tool_call:0": "interrupted", "done:prompt:0": "", "done:response:1": "",
		}, "stale prompt kept"},
	}
	for _, tt := range tests {
		got := callStates(t, tt.h)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: turns\n got %v\nwant %v", tt.name, got, tt.want)
		}
	}
	var one turnsBody
	getJSON(t, h, "/api/threads/th-int/turns?role=prompt&q=stale", http.StatusOK, &one)
	if len(one.Turns) != 1 || one.Turns[0].Content != "stale prompt kept" || !one.Turns[0].Interrupted {
		t.Errorf("stale prompt: %+v, want its content kept and interrupted", one.Turns)
	}
}

func TestThreadPageInterrupted(t *testing.T) {
	h, _ := interruptedFixture(t)
	res := get(t, h, "/threads/th-int")
	if res.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", res.status, res.body)
	}
	for _, tt := range []struct{ desc, want string }{
		{"the summary counts running calls without the interrupted ones", `<span class="pill running">2 running</span>`},
		{"and counts the interrupted ones", `<span class="pill interrupted">3 interrupted</span>`},
		{"an interrupted prompt is marked", `<article class="turn turn-interrupted" id="stale:prompt:0"`},
		{"a fresh one runs", `<article class="turn turn-running" id="fresh:prompt:0"`},
		{"the interrupted tool call is marked", `<article class="turn turn-interrupted" id="tool:tool_call:0"`},
		{"its prompt is kept", `stale prompt kept`},
	} {
		if !strings.Contains(res.body, tt.want) {
			t.Errorf("%s: page lacks %q", tt.desc, tt.want)
		}
	}
	if n := strings.Count(res.body, `<span class="pill interrupted" title=`); n != 3 {
		t.Errorf("%d turns marked interrupted, want 3", n)
	}
}

func TestTraceInterrupted(t *testing.T) {
	h, _ := interruptedFixture(t)
	var tr viewer.Trace
	getJSON(t, h, "/api/traces/trace-th-int", http.StatusOK, &tr)
	var got []string
	for _, sp := range tr.Spans {
		got = append(got, fmt.Sprintf("%s running=%v interrupted=%v", sp.SpanID, sp.Running, sp.Interrupted))
	}
	want := []string{
		"stale running=false interrupted=true", "fresh running=true interrupted=false", "silent running=false interrupted=true",
		"tool running=false interrupted=true", "done running=false interrupted=false", "young running=true interrupted=false",
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("trace spans:\n%s\nlack %q", strings.Join(got, "\n"), w)
		}
	}

	page := get(t, h, "/traces/trace-th-int").body
	if n := strings.Count(page, `<span class="pill interrupted">interrupted</span>`); n != 3 {
		t.Errorf("trace page marks %d spans interrupted, want 3", n)
	}
	if n := strings.Count(page, `<span class="pill running">running</span>`); n != 2 {
		t.Errorf("trace page marks %d spans running, want 2", n)
	}
	if !strings.Contains(page, `span-interrupted`) {
		t.Errorf("trace page lacks the span-interrupted row class")
	}
}

// In a real browser the interrupted prompt's pill shows, styled apart from
// a running one, and the trace page greys the interrupted span's bar.
func TestInterruptedInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _ := interruptedFixture(t)
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-int"), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	got := evalJS[string](ctx, t, `(() => {
		const pill = (id, cls) => document.getElementById(id).closest("article.call").querySelector(".call-head .pill." + cls);
		const stale = pill("stale:prompt:0", "interrupted"), fresh = pill("fresh:prompt:0", "running");
		if (!stale || !fresh || stale.offsetParent === null) return "pills missing or hidden";
		const s = getComputedStyle(stale), f = getComputedStyle(fresh);
		return [s.borderTopStyle, s.color === f.color ? "same colour as running" : "own colour"].join(" ");
	})()`)
	if got != "dashed own colour" {
		t.Errorf("interrupted pill: %s, want dashed in its own colour", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/traces/trace-th-int"), chromedp.WaitVisible(chromedp.CSS(".wf-bar"))); err != nil {
		t.Fatal(err)
	}
	fills := evalJS[string](ctx, t, `(() => {
		const fill = id => getComputedStyle(document.querySelector('[data-span="' + id + '"] .wf-bar')).fill;
		return fill("stale") === fill("fresh") ? "same" : "different";
	})()`)
	if fills != "different" {
		t.Errorf("trace bars of the interrupted and the running call have the same fill")
	}
}
