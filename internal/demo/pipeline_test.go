package demo_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// row is one conversations row of the demo thread.
type row struct {
	turnID, spanID, parentTurnID          string
	phase, speaker, role, operation       string
	provider, model, toolName, toolCallID string
	content, status, errMsg, project      string
	round                                 uint16
	tokensIn, tokensOut                   *uint32
	tokensCacheRead, tokensReasoning      *uint32
	cost                                  *float64
	costSource                            string
}

func (r row) String() string {
	return r.phase + "/" + r.speaker + "/" + r.role + " " + r.turnID
}

// runDemo runs the demo pipeline against the fake provider, stores it in a
// fresh ClickHouse database and returns the run and its thread's rows.
func runDemo(t *testing.T) (demo.Result, []row) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	srv := httptest.NewServer(demo.NewProvider())
	defer srv.Close()
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("demo"), collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx := context.Background()
	res, err := demo.Run(ctx, rec, srv.URL+"/v1")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	rows, err := conn.Query(ctx, `SELECT turn_id, span_id, parent_turn_id, phase, speaker, role, operation,
		provider, model, tool_name, tool_call_id, content, status, error, project, round,
		tokens_in, tokens_out, tokens_cache_read, tokens_reasoning, cost_usd, cost_source
		FROM conversations FINAL WHERE thread_id = ? ORDER BY start_ns, seq`, res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.turnID, &r.spanID, &r.parentTurnID, &r.phase, &r.speaker, &r.role, &r.operation,
			&r.provider, &r.model, &r.toolName, &r.toolCallID, &r.content, &r.status, &r.errMsg, &r.project, &r.round,
			&r.tokensIn, &r.tokensOut, &r.tokensCacheRead, &r.tokensReasoning, &r.cost, &r.costSource); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatalf("no rows for thread %s", res.ThreadID)
	}
	return res, got
}

func TestRunStoresConversation(t *testing.T) {
	res, rows := runDemo(t)
	if !strings.HasPrefix(res.ThreadID, "demo-") {
		t.Errorf("thread id %q, want demo-<hex>", res.ThreadID)
	}
	byTurn := map[string]row{}
	for _, r := range rows {
		byTurn[r.turnID] = r
		if r.project != "demo" {
			t.Errorf("%v: project %q, want demo", r, r.project)
		}
	}
	// response returns the successful response row of speaker in phase
	// and round; there must be exactly one.
	response := func(phase, speaker string, round uint16) row {
		t.Helper()
		var found []row
		for _, r := range rows {
			if r.role == "response" && r.phase == phase && r.speaker == speaker && r.round == round {
				found = append(found, r)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%s/%s round %d: %d response rows, want 1: %v", phase, speaker, round, len(found), found)
		}
		return found[0]
	}

	t.Run("one prompt and one answer per call", func(t *testing.T) {
		type counts struct{ prompts, answers int }
		calls := map[string]*counts{}
		for _, r := range rows {
			if r.operation != "chat" {
				continue
			}
			c := calls[r.spanID]
			if c == nil {
				c = &counts{}
				calls[r.spanID] = c
			}
			switch r.role {
			case "prompt":
				c.prompts++
			case "response", "error":
				c.answers++
			default:
				t.Errorf("%v: unexpected role in a chat call", r)
			}
		}
		for span, c := range calls {
			if c.prompts != 1 || c.answers != 1 {
				t.Errorf("span %s: %d prompt and %d response/error rows, want 1 and 1", span, c.prompts, c.answers)
			}
		}
		if len(calls) != len(res.Calls) {
			t.Errorf("%d chat calls stored, the run made %d", len(calls), len(res.Calls))
		}
		for _, c := range res.Calls {
			r, ok := byTurn[c.TurnID]
			wantRole := "response"
			if c.Err != nil {
				wantRole = "error"
			}
			if !ok || r.role != wantRole || r.phase != c.Phase || r.speaker != c.Speaker || r.provider != c.Provider {
				t.Errorf("call %s/%s attempt %d (turn %s): stored %+v, want a %s row", c.Phase, c.Speaker, c.Attempt, c.TurnID, r, wantRole)
			}
		}
	})

	t.Run("the overloaded call", func(t *testing.T) {
		var errs []row
		for _, r := range rows {
			if r.role == "error" {
				errs = append(errs, r)
			}
		}
		if len(errs) != 1 {
			t.Fatalf("%d error rows, want 1: %v", len(errs), errs)
		}
		e := errs[0]
		if e.phase != "verify" || e.speaker != demo.OverloadedSpeaker || e.status != "error" {
			t.Errorf("error row %v status %q, want verify/%s with status error", e, e.status, demo.OverloadedSpeaker)
		}
		for _, s := range []string{e.content, e.errMsg} {
			if !strings.Contains(s, "529") || !strings.Contains(s, "overloaded") {
				t.Errorf("error row content/error %q, want the provider's 529 overloaded", s)
			}
		}
		var prompts int
		for _, r := range rows {
			if r.spanID == e.spanID && r.role == "prompt" {
				prompts++
			}
		}
		if prompts != 1 {
			t.Errorf("failed call has %d prompt rows, want 1", prompts)
		}
		// The retry succeeded after it.
		retry := response("verify", demo.OverloadedSpeaker, 0)
		if retry.parentTurnID != e.parentTurnID {
			t.Errorf("retry parent %q, failed attempt parent %q, want the same", retry.parentTurnID, e.parentTurnID)
		}
		if !strings.Contains(retry.content, "요약") || !strings.Contains(retry.content, "🎉") {
			t.Errorf("verifier report lost its non-ASCII text: %q", retry.content)
		}
	})

	t.Run("dual plan", func(t *testing.T) {
		var speakers []string
		for _, r := range rows {
			if r.phase != "plan" {
				continue
			}
			if r.role == "response" {
				speakers = append(speakers, r.speaker)
			}
			if r.role == "error" || r.round != 0 {
				t.Errorf("%v round %d: want only successful round-0 turns in the plan phase", r, r.round)
			}
		}
		slices.Sort(speakers)
		want := []string{"adjudicator", "claude-critic", "claude-planner", "codex-critic", "codex-planner"}
		if !slices.Equal(speakers, want) {
			t.Fatalf("plan phase responses by %q, want %q", speakers, want)
		}
		planA := response("plan", "claude-planner", 0)
		planB := response("plan", "codex-planner", 0)
		if res.Chosen != "A" {
			t.Errorf("chosen plan %q, want A", res.Chosen)
		}
		for _, tc := range []struct {
			speaker string
			parent  row
		}{
			{"codex-critic", planA},
			{"claude-critic", planB},
			{"adjudicator", planA}, // the plan it chose
		} {
			for _, r := range rows {
				if r.phase == "plan" && r.speaker == tc.speaker && r.parentTurnID != tc.parent.turnID {
					t.Errorf("%v: parent %q, want %q (%v)", r, r.parentTurnID, tc.parent.turnID, tc.parent)
				}
			}
		}
		if !strings.Contains(response("plan", "codex-critic", 0).content, "plan A") ||
			!strings.Contains(response("plan", "claude-critic", 0).content, "plan B") {
			t.Error("critiques do not name the plan they critique")
		}
	})

	t.Run("revision round", func(t *testing.T) {
		review := response("review", "reviewer", 0)
		revised := response("revision", "claude-planner", 1)
		approval := response("review", "reviewer", 1)
		if revised.parentTurnID != review.turnID || approval.parentTurnID != revised.turnID {
			t.Errorf("revision parent %q (want the review %q), approval parent %q (want the revision %q)",
				revised.parentTurnID, review.turnID, approval.parentTurnID, revised.turnID)
		}
		if !strings.Contains(review.content, "changes requested") || !strings.Contains(approval.content, "approved") {
			t.Errorf("review %q then %q, want changes requested then approved", review.content, approval.content)
		}
		for _, r := range rows {
			inRound := r.phase == "revision" || r.spanID == approval.spanID
			if inRound && r.round != 1 || !inRound && r.round != 0 {
				t.Errorf("%v: round %d", r, r.round)
			}
		}
	})

	t.Run("executor tools", func(t *testing.T) {
		type pair struct{ call, result int }
		tools := map[string]*pair{}
		var names []string
		for _, r := range rows {
			if r.role != "tool_call" && r.role != "tool_result" {
				continue
			}
			if r.phase != "execute" || r.speaker != "codex-executor" || r.operation != "execute_tool" || r.toolCallID == "" {
				t.Errorf("%v: tool row with phase %q, operation %q, call id %q", r, r.phase, r.operation, r.toolCallID)
			}
			p := tools[r.toolCallID]
			if p == nil {
				p = &pair{}
				tools[r.toolCallID] = p
			}
			if r.role == "tool_call" {
				p.call++
				names = append(names, r.toolName)
			} else {
				p.result++
			}
		}
		if want := []string{"read_file", "run_tests", "apply_patch", "run_tests"}; !slices.Equal(names, want) {
			t.Errorf("tool calls %q, want %q", names, want)
		}
		for _, run := range res.Tools {
			p := tools[run.CallID]
			if p == nil || p.call != 1 || p.result != 1 {
				t.Errorf("tool call %s (%s): %+v, want one tool_call and one tool_result row", run.CallID, run.Name, p)
			}
			if run.Err != nil {
				t.Errorf("tool %s failed: %v", run.Name, run.Err)
			}
			// The executor's response turn that asked for it names it.
			var asked bool
			for _, r := range rows {
				asked = asked || r.role == "response" && r.speaker == "codex-executor" && strings.Contains(r.content, run.CallID)
			}
			if !asked {
				t.Errorf("no executor response asks for tool call %s", run.CallID)
			}
		}
		if len(tools) != len(res.Tools) {
			t.Errorf("%d tool call ids stored, the run made %d", len(tools), len(res.Tools))
		}
	})

	t.Run("tokens and cost", func(t *testing.T) {
		var withCost, tokensOnly, noUsage int
		for _, c := range res.Calls {
			r, ok := byTurn[c.TurnID]
			if !ok || c.Err != nil {
				continue
			}
			if got, want := fmtU(r.tokensIn), fmtUsage(c.Usage, func(u *instrument.Usage) int { return u.InputTokens }); got != want {
				t.Errorf("%v: tokens_in %s, want %s", r, got, want)
			}
			if got, want := fmtU(r.tokensOut), fmtUsage(c.Usage, func(u *instrument.Usage) int { return u.OutputTokens }); got != want {
				t.Errorf("%v: tokens_out %s, want %s", r, got, want)
			}
			if got, want := fmtU(r.tokensCacheRead), fmtUsage(c.Usage, func(u *instrument.Usage) int { return u.CacheReadTokens }); got != want {
				t.Errorf("%v: tokens_cache_read %s, want %s", r, got, want)
			}
			if got, want := fmtU(r.tokensReasoning), fmtUsage(c.Usage, func(u *instrument.Usage) int { return u.ReasoningTokens }); got != want {
				t.Errorf("%v: tokens_reasoning %s, want %s", r, got, want)
			}
			// A reported cost is kept; tokens without one are priced at
			// ingest (the demo's first-party models are in the price table).
			switch {
			case c.CostUSD != nil && (r.cost == nil || *r.cost != *c.CostUSD || r.costSource != "provided"):
				t.Errorf("%v: cost %v (%s), the provider reported %v", r, deref(r.cost), r.costSource, deref(c.CostUSD))
			case c.CostUSD == nil && r.tokensIn != nil && (r.cost == nil || r.costSource != "priced"):
				t.Errorf("%v: cost %v (%s), want a priced cost for tokens without one", r, deref(r.cost), r.costSource)
			}
			switch {
			case c.CostUSD != nil && r.tokensIn != nil:
				withCost++
			case r.tokensIn != nil:
				tokensOnly++
			default:
				noUsage++
			}
		}
		if withCost == 0 || tokensOnly == 0 || noUsage == 0 {
			t.Errorf("responses with cost %d, with tokens only %d, without usage %d; want some of each", withCost, tokensOnly, noUsage)
		}
		for _, r := range rows {
			if r.role != "response" && (r.tokensIn != nil || r.tokensOut != nil || r.cost != nil) {
				t.Errorf("%v: tokens or cost on a %s row", r, r.role)
			}
		}
	})
}

func fmtU(p *uint32) string {
	if p == nil {
		return "NULL"
	}
	return strconv.Itoa(int(*p))
}

func fmtUsage(u *instrument.Usage, f func(*instrument.Usage) int) string {
	if u == nil {
		return "NULL"
	}
	return strconv.Itoa(f(u))
}

func deref(p *float64) any {
	if p == nil {
		return "NULL"
	}
	return *p
}
