package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// withAttrs returns turn carrying the span attributes given as key, value
// pairs, as the collector keeps those the contract does not read.
func withAttrs(turn schema.Turn, kv ...string) schema.Turn {
	for i := 0; i+1 < len(kv); i += 2 {
		turn.Attributes = append(turn.Attributes, schema.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return turn
}

// failed makes r the error turn of a call that failed.
func failed(r schema.Turn, msg string) schema.Turn {
	r.TurnID, r.Role, r.Status, r.Error = schema.ResponseTurnID(r.SpanID, true), schema.RoleError, schema.StatusError, msg
	r.Content, r.ContentBytes = msg, uint32(len(msg))
	return r
}

// costing gives the response r a cost.
func costing(r schema.Turn, usd float64) schema.Turn {
	r.CostUSD, r.TokensIn, r.TokensOut = f64(usd), u32(100), u32(10)
	return r
}

const taskKey = "convtrace.thread.task"

// statusFixture holds threads of each status, cost, duration and thread
// attributes, every turn delivered twice:
//   - ok1: one call, $0.10, 10 s;
//   - fail1: two calls 2 min apart, the first failed, $0.50;
//   - run1: a call running (its recorder beats);
//   - int1: a call that never ended, its recorder silent;
//   - task1a (task T-42, board ops) and task1b (task T-1, then T-42 on its
//     later call: the latest wins), task2 (task T-7, $0.05).
func statusFixture(t *testing.T) (http.Handler, *topology.Conn) {
	h, conn := newServer(t)
	insertStatusTurns(t, conn)
	return h, conn
}

// insertStatusTurns stores the turns of statusFixture, twice.
func insertStatusTurns(t *testing.T, conn driver.Conn) {
	t.Helper()
	var turns []schema.Turn
	p, r := call("ok1", "ok1-a", "plan", 0, "planner", "openai", "gpt-5", 100, "all good", "done")
	r.StartNS = at(110)
	turns = append(turns, p, costing(r, 0.10))
	p, r = call("fail1", "fail1-a", "plan", 0, "planner", "openai", "gpt-5", 20, "first try", "")
	p2, r2 := call("fail1", "fail1-b", "plan", 1, "planner", "openai", "gpt-5", 140, "second try", "fine")
	turns = append(turns, p, costing(failed(r, "rate limited"), 0.25), p2, costing(r2, 0.25))
	p, _ = call("run1", "run1-a", "plan", 0, "planner", "anthropic", "claude", 300, "still thinking", "")
	turns = append(turns, beating(p))
	p, _ = call("int1", "int1-a", "plan", 0, "planner", "anthropic", "claude", 150, "never answered", "")
	turns = append(turns, p)
	p, r = call("task1a", "task1a-a", "plan", 0, "planner", "openai", "gpt-5", 60, "task work", "ok")
	turns = append(turns, p, withAttrs(r, taskKey, "T-42", "convtrace.thread.board", "ops", "other.key", "x"))
	p, r = call("task1b", "task1b-a", "plan", 0, "planner", "openai", "gpt-5", 40, "early", "ok")
	p2, r2 = call("task1b", "task1b-b", "plan", 0, "planner", "openai", "gpt-5", 70, "later", "ok")
	turns = append(turns, p, withAttrs(r, taskKey, "T-1"), p2, withAttrs(r2, taskKey, "T-42"))
	p, r = call("task2", "task2-a", "plan", 0, "planner", "openai", "gpt-5", 30, "other task", "ok")
	turns = append(turns, p, withAttrs(costing(r, 0.05), taskKey, "T-7"))
	testkit.InsertTurns(t, conn, turns...)
	testkit.InsertTurns(t, conn, turns...) // every turn twice: the copies fold
}

// statusAnswer is GET /api/threads with the fields of this test.
type statusAnswer struct {
	Threads []store.Thread `json:"threads"`
	Next    string         `json:"next"`
	Live    bool           `json:"live"`
}

func (a statusAnswer) ids() string {
	var ids []string
	for _, t := range a.Threads {
		ids = append(ids, t.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// The list's status, duration and attribute columns, and each filter on
// them, exact with every turn delivered twice, in the JSON and on the page.
func TestThreadsStatusFilters(t *testing.T) {
	h, _ := statusFixture(t)
	checkStatusFilters(t, h, "")
}

// checkStatusFilters checks every filter of the list over statusFixture;
// step names the state of the data.
func checkStatusFilters(t *testing.T, h http.Handler, step string) {
	t.Helper()
	for _, c := range []struct{ query, want string }{
		{"", "fail1,int1,ok1,run1,task1a,task1b,task2"},
		{"status=failed", "fail1"},
		{"status=running", "run1"},
		{"status=interrupted", "int1"},
		{"status=ok", "ok1,task1a,task1b,task2"},
		{"min_cost=0.3", "fail1"},
		{"min_cost=0.05&max_cost=0.1", "ok1,task2"},
		{"max_cost=%240.07", "task2"}, // "$0.07"
		{"min_duration=1m", "fail1"},
		{"min_duration=5s&max_duration=90s", "ok1,task1b"},
		{"max_duration=500ms", "int1,run1"},
		{"task=T-42", "task1a,task1b"},
		{"attr.task=T-42&attr.board=ops", "task1a"},
		{"task=T-1", ""}, // task1b's task is T-42 now
		{"task=T-7&status=ok&max_cost=1", "task2"},
		{"q=FAIL1", "fail1"},                         // the id
		{"q=t-42", "task1a,task1b"},                  // an attribute's value
		{"q=ops", "task1a"},                          // another attribute's value
		{"q=" + url.QueryEscape("answered"), "int1"}, // the title still
	} {
		var got statusAnswer
		getJSON(t, h, "/api/threads?"+c.query, http.StatusOK, &got)
		if got.ids() != c.want {
			t.Errorf("%sGET /api/threads?%s = %q, want %q", step, c.query, got.ids(), c.want)
		}
		res := get(t, h, "/?"+c.query)
		if n := strings.Count(res.body, `<tr class="thread-row"`); res.status != http.StatusOK || n != len(got.Threads) {
			t.Errorf("%sGET /?%s: status %d, %d rows, want 200 and %d", step, c.query, res.status, n, len(got.Threads))
		}
	}

	var all statusAnswer
	getJSON(t, h, "/api/threads", http.StatusOK, &all)
	byID := map[string]store.Thread{}
	for _, th := range all.Threads {
		byID[th.ID] = th
	}
	type facts struct {
		failed, open       uint64
		running, interrupt bool
		duration           time.Duration
		attrs              string
	}
	factsOf := func(th store.Thread) facts {
		var attrs []string
		for k, v := range th.Attributes {
			attrs = append(attrs, k+"="+v)
		}
		slices.Sort(attrs)
		return facts{th.FailedCalls, th.OpenCalls, th.Running, th.Interrupted, time.Duration(th.DurationNS), strings.Join(attrs, " ")}
	}
	for id, want := range map[string]facts{
		"ok1":    {duration: 10 * time.Second},
		"fail1":  {failed: 1, duration: 121 * time.Second},
		"run1":   {open: 1, running: true},
		"int1":   {open: 1, interrupt: true},
		"task1a": {duration: time.Second, attrs: "board=ops task=T-42"},
		"task1b": {duration: 31 * time.Second, attrs: "task=T-42"},
		"task2":  {duration: time.Second, attrs: "task=T-7"},
	} {
		if got := factsOf(byID[id]); got != want {
			t.Errorf("%sthread %s: %+v, want %+v", step, id, got, want)
		}
	}
	if !all.Live {
		t.Errorf("%sthe list with run1 running is not live", step)
	}
	var quiet statusAnswer
	if getJSON(t, h, "/api/threads?status=ok", http.StatusOK, &quiet); quiet.Live {
		t.Errorf("%sthe list of old finished threads is live", step)
	}

	page := get(t, h, "/").body
	for _, want := range []string{
		`<span class="pill failed">1 failed</span>`,
		`<span class="pill running" title="1 calls running">running</span>`,
		`>interrupted</span>`,
		`<td class="num duration">2m1s</td>`,
		`<a class="thread-attr" href="/?attr.task=T-42"`,
		`<span class="attr-name">board</span> ops</a>`,
		`<table class="threads" data-live="true">`,
		`<select name="status">`, `name="min_cost"`, `name="max_duration"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("%sthe page lacks %s", step, want)
		}
	}
	filtered := get(t, h, "/?task=T-42&min_cost=0.5&max_duration=1h30m&status=ok").body
	for _, want := range []string{`name="attr.task" value="T-42"`, `name="min_cost" value="0.5"`,
		`name="max_duration" value="1h30m0s"`, `<option value="ok" selected>`} {
		if !strings.Contains(filtered, want) {
			t.Errorf("%sthe filtered page's form lacks %s", step, want)
		}
	}
}

// Bad filter values get a 400 that names the parameter, on the page and
// in the JSON.
func TestThreadsStatusFiltersRefuseBadValues(t *testing.T) {
	h, _ := newServer(t)
	for _, c := range []struct{ query, param string }{
		{"status=broken", "status"},
		{"min_cost=cheap", "min_cost"},
		{"max_cost=-1", "max_cost"},
		{"max_cost=NaN", "max_cost"},
		{"min_cost=2&max_cost=1", "max_cost"},
		{"min_duration=5", "min_duration"},
		{"max_duration=-5m", "max_duration"},
		{"min_duration=1h&max_duration=1m", "max_duration"},
		{"task=", "task"},
		{"attr.=x", "attr."},
		{"task=a&attr.task=b", "task"},
		{"attr." + strings.Repeat("n", 129) + "=x", "attr."},
		{"task=" + strings.Repeat("v", 1025), "task"},
		{"task=a&limit=1001", "limit"},
	} {
		var body struct {
			Error string `json:"error"`
		}
		getJSON(t, h, "/api/threads?"+c.query, http.StatusBadRequest, &body)
		if !strings.HasPrefix(body.Error, c.param) {
			t.Errorf("GET /api/threads?%s: error %q, want one naming %s", c.query, body.Error, c.param)
		}
		if res := get(t, h, "/?"+c.query); res.status != http.StatusBadRequest {
			t.Errorf("GET /?%s: status %d, want 400", c.query, res.status)
		}
	}
}

// /api/threads?task=ID answers every thread of the task at once, beyond
// the page of 50 the list shows by default.
func TestThreadsOfOneTask(t *testing.T) {
	h, conn := newServer(t)
	var turns []schema.Turn
	for i := range 70 {
		id := fmt.Sprintf("big-%02d", i)
		p, r := call(id, id, "plan", 0, "planner", "openai", "gpt-5", i, "step", "ok")
		turns = append(turns, p, withAttrs(r, taskKey, "BIG"))
	}
	p, r := call("small", "small", "plan", 0, "planner", "openai", "gpt-5", 100, "step", "ok")
	turns = append(turns, p, withAttrs(r, taskKey, "SMALL"))
	testkit.InsertTurns(t, conn, turns...)

	var task statusAnswer
	getJSON(t, h, "/api/threads?task=BIG", http.StatusOK, &task)
	if len(task.Threads) != 70 || task.Next != "" {
		t.Errorf("task BIG: %d threads, next %q; want all 70 in one answer", len(task.Threads), task.Next)
	}
	var capped statusAnswer
	getJSON(t, h, "/api/threads?task=BIG&limit=60", http.StatusOK, &capped)
	if len(capped.Threads) != 60 || !strings.Contains(capped.Next, "task=BIG") || strings.Contains(capped.Next, "limit=") == false {
		t.Errorf("task BIG, limit 60: %d threads, next %q; want 60 and a next page of the same task", len(capped.Threads), capped.Next)
	}
	var page statusAnswer
	getJSON(t, h, "/api/threads", http.StatusOK, &page)
	if len(page.Threads) != 50 {
		t.Errorf("the unfiltered list: %d threads, want a page of 50", len(page.Threads))
	}
}

// The thread attributes and status survive a prune: a thread's shell keeps
// what the prune removed (fail1's failed call, task2's task, task1b's
// older value, which its newer call's outweighs), and every filter answers
// as before, with the copies of every turn folded throughout.
func TestThreadsStatusAfterPrune(t *testing.T) {
	h, conn := statusFixture(t)
	checkStatusAfterPrune(t, h, conn)
}

// The same on a ClickHouse cluster, where the summaries are refreshed
// from every thread's fingerprint and a prune's deletions run on every
// replica.
func TestThreadsStatusOnCluster(t *testing.T) {
	_, conn, _ := testkit.OpenCluster(t)
	insertStatusTurns(t, conn)
	checkStatusAfterPrune(t, viewer.New(conn).Handler(), conn)
}

// checkStatusAfterPrune checks the list's filters over the turns of
// statusFixture, prunes what started before at(55), and checks them again.
func checkStatusAfterPrune(t *testing.T, h http.Handler, conn *topology.Conn) {
	t.Helper()
	checkStatusFilters(t, h, "before the prune: ")
	ctx := context.Background()
	// Removes fail1's failed call, task1b's early call and task2 whole.
	st := store.New(conn, 1000, time.Minute)
	if _, err := st.Prune(ctx, store.PruneScope{BeforeNS: at(55)}, nil); err != nil {
		t.Fatal(err)
	}
	var after statusAnswer
	getJSON(t, h, "/api/threads", http.StatusOK, &after)
	pruned := map[string]uint64{}
	for _, th := range after.Threads {
		pruned[th.ID] = th.PrunedTurns
	}
	if want := map[string]uint64{"fail1": 2, "task1b": 2, "task2": 2}; fmt.Sprint(pruned) != fmt.Sprint(map[string]uint64{
		"fail1": 2, "int1": 0, "ok1": 0, "run1": 0, "task1a": 0, "task1b": 2, "task2": 2}) {
		t.Fatalf("turns pruned per thread %v, want %v and none of the others", pruned, want)
	}
	checkStatusFilters(t, h, "after the prune: ")
}
