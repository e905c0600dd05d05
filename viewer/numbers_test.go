package viewer_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// Costs whose float sum is noisy (0.1 + 0.2 = 0.30000000000000004) read
// as their value in every JSON and CSV answer: the report, its CSVs, a
// thread's phase totals, the threads list and the trace.
func TestCostsRoundedInEveryAnswer(t *testing.T) {
	h, conn := costServer(t)
	p1, r1 := call("th-n", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, "a", "b")
	p2, r2 := call("th-n", "s2", "plan", 0, "planner", "openai", "gpt-5", 10, "c", "d")
	testkit.InsertTurns(t, conn, p1, usage(r1, 10, 10, 0, f64(0.1), schema.CostProvided),
		p2, usage(r2, 10, 10, 0, f64(0.2), schema.CostProvided))
	paths := []string{costPath("/api/cost", ""), "/api/threads", "/api/threads/th-n/cost", "/api/traces/trace-th-n"}
	for _, table := range []string{"model", "phase", "day_model", "threads"} {
		paths = append(paths, costPath("/api/cost/csv", "&table="+table))
	}
	for _, path := range paths {
		res := get(t, h, path)
		if res.status != http.StatusOK {
			t.Errorf("GET %s: status %d\n%s", path, res.status, res.body)
			continue
		}
		if strings.Contains(res.body, "0.30000000000000004") || !strings.Contains(res.body, "0.3") {
			t.Errorf("GET %s: want the cost 0.3, no float noise:\n%s", path, res.body)
		}
	}
}

// The phase chips count calls, as the cost table beside them does: two
// calls and a tool run (two more turns) in plan are 2 on the chip, in the
// JSON twin and in the table.
func TestPhaseChipsCountCalls(t *testing.T) {
	h, conn := costServer(t)
	p1, r1 := call("th-c", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, "a", "b")
	p2, r2 := call("th-c", "s2", "plan", 0, "planner", "openai", "gpt-5", 10, "c", "d")
	tc := schema.Turn{TurnID: "t1:tool_call:0", SpanID: "t1", TraceID: "trace-th-c", Project: "proj", ThreadID: "th-c", Phase: "plan",
		Role: schema.RoleToolCall, StartNS: at(20), Operation: schema.OperationExecuteTool, ToolName: "grep", Content: "grep x"}
	tr := tc
	tr.TurnID, tr.Role, tr.Seq, tr.StartNS, tr.Content = "t1:tool_result:1", schema.RoleToolResult, 1, at(21), "x"
	testkit.InsertTurns(t, conn, p1, usage(r1, 10, 10, 0, f64(0.1), schema.CostProvided),
		p2, usage(r2, 10, 10, 0, f64(0.2), schema.CostProvided), tc, tr)

	var body struct {
		Phases []struct {
			Key   string `json:"phase"`
			Calls uint64 `json:"calls"`
		} `json:"phases"`
		CostByPhase []struct {
			Phase string `json:"phase"`
			Calls uint64 `json:"calls"`
		} `json:"cost_by_phase"`
	}
	getJSON(t, h, "/api/threads/th-c", http.StatusOK, &body)
	if len(body.Phases) != 1 || body.Phases[0].Calls != 2 || len(body.CostByPhase) != 1 || body.CostByPhase[0].Calls != 2 {
		t.Errorf("GET /api/threads/th-c: phases %+v, cost by phase %+v; want plan with 2 calls in both", body.Phases, body.CostByPhase)
	}
	page := get(t, h, "/threads/th-c").body
	chip := regexp.MustCompile(`name="phase" value="plan"[^>]*> Plan <span class="count"[^>]*>(\d+)</span>`).FindStringSubmatch(page)
	row := regexp.MustCompile(`<tr><td>plan</td><td class="num">(\d+)</td>`).FindStringSubmatch(page)
	if chip == nil || row == nil || chip[1] != "2" || row[1] != "2" || !strings.Contains(page, "Phases <span class=\"unit\">(calls)</span>") {
		t.Errorf("thread page: chip %q, cost table row %q; want both 2, the chips said to count calls", chip, row)
	}
}

// A call that failed and was made again with success (same phase, round
// and speaker, later) reads "retried", not "failed": on the page's summary,
// on its card and in the JSON twin. A failure with no retry stays failed.
func TestRetriedCallIsNotFailed(t *testing.T) {
	h, conn := costServer(t)
	fp, fr := call("th-r", "s1", "review", 0, "critic", "openai", "gpt-5", 0, "review it", "")
	fr.Role, fr.Status, fr.Error, fr.TurnID = schema.RoleError, schema.StatusError, "429 rate limited", "s1:error:1"
	op, or := call("th-r", "s2", "review", 0, "critic", "openai", "gpt-5", 10, "review it", "looks good")
	xp, xr := call("th-r", "s3", "verify", 0, "checker", "openai", "gpt-5", 20, "verify it", "")
	xr.Role, xr.Status, xr.Error, xr.TurnID = schema.RoleError, schema.StatusError, "500", "s3:error:1"
	testkit.InsertTurns(t, conn, fp, fr, op, or, xp, xr)

	var body struct {
		Errors  int `json:"errors"`
		Retried int `json:"retried"`
	}
	getJSON(t, h, "/api/threads/th-r", http.StatusOK, &body)
	if body.Errors != 1 || body.Retried != 1 {
		t.Errorf("GET /api/threads/th-r: errors %d, retried %d; want 1 failed (verify) and 1 retried (review)", body.Errors, body.Retried)
	}
	page := get(t, h, "/threads/th-r").body
	summary := page[strings.Index(page, `<p class="summary">`):]
	summary = summary[:strings.Index(summary, "</p>")]
	if !strings.Contains(summary, `<span class="pill failed">1 failed</span>`) || !strings.Contains(summary, `>1 retried</span>`) {
		t.Errorf("thread summary: want 1 failed and 1 retried:\n%s", summary)
	}
	if card := page[strings.Index(page, `id="call-s1"`):]; !strings.Contains(card[:min(len(card), 3000)], `class="pill retried"`) {
		t.Errorf("the retried call's card is not marked retried:\n%s", card[:min(len(card), 3000)])
	}
}

// Calls that reported no usage read "no usage reported" where their
// tokens are unknown, on /cost and on the thread's cost table, not "—".
func TestNoUsageReported(t *testing.T) {
	h, conn := costServer(t)
	p1, r1 := call("th-u", "s1", "plan", 0, "planner", "ollama", "qwen", 0, "a", "b")
	p2, r2 := call("th-u", "s2", "review", 0, "critic", "openai", "gpt-5", 10, "c", "d")
	r1.CostSource = schema.CostNone
	testkit.InsertTurns(t, conn, p1, r1, p2, usage(r2, 10, 10, 0, f64(0.1), schema.CostProvided))
	page := get(t, h, costPath("/cost", "")).body
	row := regexp.MustCompile(`(?s)<tr><td>qwen</td>\s*<td class="num">1</td>(.*?)</tr>`).FindStringSubmatch(page)
	if row == nil || !strings.Contains(row[1], "no usage reported") {
		t.Errorf("/cost: the qwen row %q, want its tokens to say no usage reported", row)
	}
	thread := get(t, h, "/threads/th-u").body
	prow := regexp.MustCompile(`(?s)<tr><td>plan</td><td class="num">1</td>(.*?)</tr>`).FindStringSubmatch(thread)
	if prow == nil || !strings.Contains(prow[1], "no usage reported") {
		t.Errorf("thread cost table: the plan row %q, want its tokens to say no usage reported", prow)
	}
}
