package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// latencyCall is one provider call of the latency test, as the test
// expects the report to count it.
type latencyCall struct {
	model, provider, phase, speaker string
	duration, ttft                  uint64
	failed                          bool
}

// latencyTurns returns the rows of one call: its prompt, an error turn a
// CLI agent said along the way when midError, and the row that ends it
// (the response, or the error of a failed call), stored copies times.
func latencyTurns(span string, at uint64, c latencyCall, midError bool, copies int) []schema.Turn {
	base := schema.Turn{TraceID: "tr-" + span, SpanID: span, Project: "p", ThreadID: "th-" + span[:1],
		Model: c.model, Provider: c.provider, Phase: c.phase, Speaker: c.speaker, Status: schema.StatusOK,
		Operation: schema.OperationChat}
	prompt := base
	prompt.TurnID, prompt.Role, prompt.StartNS = schema.PromptTurnID(span), schema.RolePrompt, at-c.duration
	turns := []schema.Turn{prompt}
	if midError {
		e := base
		e.TurnID, e.Role, e.Seq, e.Status, e.StartNS = schema.TurnID(span, schema.RoleError, 1), schema.RoleError, 1, schema.StatusError, at-1
		turns = append(turns, e)
	}
	end := base
	end.Seq = uint16(len(turns))
	end.Role, end.CostSource, end.StartNS, end.DurationNS, end.TTFTNS = schema.RoleResponse, schema.CostNone, at, c.duration, c.ttft
	if c.failed && !midError {
		end.Role, end.Status, end.Error = schema.RoleError, schema.StatusError, "overloaded"
	}
	end.TurnID = schema.TurnID(span, end.Role, end.Seq)
	for i := range copies {
		e := end
		e.Revision = uint64(i)
		turns = append(turns, e)
	}
	return turns
}

// exactQuantile is ClickHouse's quantileExact: the value at index
// floor(level·n) of the values sorted, the last for level 1.
func exactQuantile(sorted []uint64, level float64) uint64 {
	return sorted[min(int(level*float64(len(sorted))), len(sorted)-1)]
}

// expectLatency computes the report's group of calls in Go.
func expectLatency(key string, calls []latencyCall) LatencyGroup {
	g := LatencyGroup{Key: key, Calls: uint64(len(calls))}
	var durations, ttfts []uint64
	for _, c := range calls {
		durations = append(durations, c.duration)
		if c.ttft > 0 {
			ttfts = append(ttfts, c.ttft)
		}
		if c.failed {
			g.Failed++
		}
	}
	slices.Sort(durations)
	slices.Sort(ttfts)
	g.ErrorRate = float64(g.Failed) / float64(g.Calls)
	g.Duration = Percentiles{exactQuantile(durations, 0.5), exactQuantile(durations, 0.95), exactQuantile(durations, 0.99)}
	if g.TTFTCalls = uint64(len(ttfts)); g.TTFTCalls > 0 {
		g.TTFT = &Percentiles{exactQuantile(ttfts, 0.5), exactQuantile(ttfts, 0.95), exactQuantile(ttfts, 0.99)}
	}
	return g
}

func (g LatencyGroup) String() string {
	ttft := "none"
	if g.TTFT != nil {
		ttft = fmt.Sprintf("%+v", *g.TTFT)
	}
	return fmt.Sprintf("%q calls=%d failed=%d rate=%v duration=%+v ttft(%d)=%s", g.Key, g.Calls, g.Failed, g.ErrorRate, g.Duration, g.TTFTCalls, ttft)
}

// The latency report's percentiles, error rates and counts equal those
// computed in Go from the calls inserted: a call stored twice counts once,
// calls without a time to first token are left out of its percentiles, a
// failed call and a call with an error turn both count as failed, and
// calls out of the range or the filters, tool executions and prompts of
// calls still running are not calls.
func TestLatency(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, time.Minute)
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(48 * time.Hour)
	r := rand.New(rand.NewPCG(15, 7))

	var calls []latencyCall
	var turns []schema.Turn
	for i := range 157 {
		c := latencyCall{
			model:    []string{"gpt-5", "claude-opus-4-1", "qwen3"}[r.IntN(3)],
			provider: []string{"openai", "anthropic"}[r.IntN(2)],
			phase:    []string{"plan", "review", "verify", ""}[r.IntN(4)],
			speaker:  []string{"planner", "critic"}[r.IntN(2)],
			duration: uint64(r.IntN(20_000)+1) * uint64(time.Millisecond),
		}
		if r.IntN(2) == 0 {
			c.ttft = uint64(r.IntN(int(c.duration))) + 1
		}
		midError := i%17 == 3
		c.failed = midError || r.IntN(9) == 0
		at := uint64(from.Add(time.Duration(r.Int64N(int64(to.Sub(from))))).UnixNano())
		turns = append(turns, latencyTurns(fmt.Sprintf("%c%04d", 'a'+rune(i%3), i), at, c, midError, 1+i%3)...)
		calls = append(calls, c)
	}
	// Not calls of the report: a call just before the range and one in
	// another project, a tool execution, a prompt still running.
	out := latencyTurns("z0001", uint64(from.UnixNano())-1, latencyCall{model: "gpt-5", duration: 5}, false, 1)
	other := latencyTurns("z0002", uint64(from.Add(time.Hour).UnixNano()), latencyCall{model: "gpt-5", duration: 7}, false, 1)
	for i := range other {
		other[i].Project = "q"
	}
	tool := schema.Turn{TurnID: "z0003:tool_result:1", TraceID: "tr", SpanID: "z0003", Project: "p", ThreadID: "th-z",
		Role: schema.RoleToolResult, Seq: 1, Status: schema.StatusError, StartNS: uint64(from.Add(time.Hour).UnixNano()), DurationNS: 9}
	running := schema.Turn{TurnID: "z0004:prompt:0", TraceID: "tr", SpanID: "z0004", Project: "p", ThreadID: "th-z",
		Role: schema.RolePrompt, Status: schema.StatusOK, StartNS: uint64(from.Add(time.Hour).UnixNano())}
	turns = append(append(append(turns, out...), other...), tool, running)
	if err := conn.Exec(ctx, "SYSTEM STOP MERGES conversations"); err != nil {
		t.Fatal(err)
	}
	for chunk := range slices.Chunk(turns, 100) {
		testkit.InsertTurns(t, conn, chunk...)
	}

	check := func(name string, f LatencyFilter, keep func(latencyCall) bool) {
		t.Helper()
		f.FromNS, f.ToNS, f.Project = uint64(from.UnixNano()), uint64(to.UnixNano()), "p"
		all, tables, err := s.Latency(ctx, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		var kept []latencyCall
		for _, c := range calls {
			if keep(c) {
				kept = append(kept, c)
			}
		}
		if want := expectLatency("", kept); all == nil || all.String() != want.String() {
			t.Errorf("%s: every call:\n got %v\nwant %v", name, all, want)
		}
		if len(tables) != len(LatencyDimensions) {
			t.Fatalf("%s: %d tables, want %d", name, len(tables), len(LatencyDimensions))
		}
		for i, d := range LatencyDimensions {
			groups := map[string][]latencyCall{}
			for _, c := range kept {
				key := map[string]string{"model": c.model, "provider": c.provider, "phase": c.phase, "speaker": c.speaker}[d]
				groups[key] = append(groups[key], c)
			}
			if tables[i].By != d || len(tables[i].Rows) != len(groups) {
				t.Errorf("%s: table %d by %s has %d rows, want by %s, %d rows", name, i, tables[i].By, len(tables[i].Rows), d, len(groups))
			}
			for j, g := range tables[i].Rows {
				if want := expectLatency(g.Key, groups[g.Key]); g.String() != want.String() {
					t.Errorf("%s: by %s:\n got %v\nwant %v", name, d, g, want)
				}
				if j > 0 && g.Calls > tables[i].Rows[j-1].Calls {
					t.Errorf("%s: by %s: %q (%d calls) after %q (%d)", name, d, g.Key, g.Calls, tables[i].Rows[j-1].Key, tables[i].Rows[j-1].Calls)
				}
			}
		}
	}
	check("all", LatencyFilter{}, func(latencyCall) bool { return true })
	check("model and phase", LatencyFilter{Model: "gpt-5", Phase: "plan"}, func(c latencyCall) bool { return c.model == "gpt-5" && c.phase == "plan" })
	check("speaker and provider", LatencyFilter{Speaker: "critic", Provider: "anthropic"}, func(c latencyCall) bool {
		return c.speaker == "critic" && c.provider == "anthropic"
	})

	// The trace page's calls carry the time to first token too.
	seen := map[bool]int{}
	for i, c := range calls {
		if seen[c.ttft > 0] >= 3 {
			continue
		}
		seen[c.ttft > 0]++
		span := fmt.Sprintf("%c%04d", 'a'+rune(i%3), i)
		_, rows, err := s.TraceRows(ctx, "tr-"+span)
		if err != nil || len(rows) != 1 || rows[0].TTFTNS != c.ttft {
			t.Errorf("trace of call %s: %+v, %v; want one call with time to first token %d", span, rows, err, c.ttft)
		}
	}

	if all, tables, err := s.Latency(ctx, LatencyFilter{FromNS: 1, ToNS: 2}, []string{"model"}); err != nil || all != nil || len(tables) != 1 || len(tables[0].Rows) != 0 {
		t.Errorf("an empty range: %v, %+v, %v; want no calls and one empty table", all, tables, err)
	}
	if _, _, err := s.Latency(ctx, LatencyFilter{}, []string{"day"}); err == nil || err.Error() != `group_by: "day" is not one of model, provider, phase, speaker` {
		t.Errorf("group_by=day: %v", err)
	}
}
