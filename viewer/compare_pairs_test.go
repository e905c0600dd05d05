package viewer

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// promptAndAnswer returns the two turns of a provider call said at second
// start.
func promptAndAnswer(span, speaker, phase string, round uint16, start int) []store.Turn {
	base := schema.Turn{ThreadID: "th", SpanID: span, Speaker: speaker, Phase: phase, Round: round, StartNS: uint64(start) * 1e9}
	p, r := base, base
	p.TurnID, p.Role = schema.PromptTurnID(span), schema.RolePrompt
	r.TurnID, r.Role = schema.ResponseTurnID(span, false), schema.RoleResponse
	return []store.Turn{{Turn: p}, {Turn: r}}
}

// A speaker's rounds across phases: the adjacent round's call of the same
// phase wins over another phase's; of several, the nearest in the
// sequence; another speaker's nearest call in time.
func TestComparePairsRounds(t *testing.T) {
	var turns []store.Turn
	for _, c := range []struct {
		span, speaker, phase string
		round                uint16
	}{
		{"p0", "planner", "plan", 0},
		{"c0", "critic", "plan", 0},
		{"c0b", "critic", "plan", 0},
		{"r1", "planner", "revision", 1},
		{"p1a", "planner", "plan", 1},
		{"p1b", "planner", "plan", 1},
		{"r3", "planner", "revision", 3},
	} {
		turns = append(turns, promptAndAnswer(c.span, c.speaker, c.phase, c.round, len(turns))...)
	}
	pairs := comparePairs(turns)
	labels := func(id string) []string {
		var got []string
		for _, l := range pairs[id] {
			got = append(got, l.Kind+" "+l.Label+" "+l.Call)
		}
		return got
	}
	tests := []struct {
		id   string
		want []string
	}{
		{"p0", []string{"round vs round 1 p1a", "speaker vs critic, plan r0 c0"}},
		{schema.PromptTurnID("c0b"), []string{"speaker vs planner, plan r0 p0", "sequence vs previous call c0"}},
		{"p1b", []string{"round vs round 0 p0", "round vs revision r3 r3", "sequence vs previous call p1a"}},
		{"r1", []string{"round vs plan r0 p0", "round vs round 3 r3"}},
		{"r3", []string{"round vs round 1 r1"}},
	}
	for _, tt := range tests {
		if got := labels(tt.id); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("pairs of %s:\n got %q\nwant %q", tt.id, got, tt.want)
		}
	}
}

// BenchmarkComparePairs pairs the calls of a 1,000-turn thread of five
// speakers over ten rounds of two phases.
func BenchmarkComparePairs(b *testing.B) {
	var turns []store.Turn
	for i := range 500 {
		turns = append(turns, promptAndAnswer("s"+strconv.Itoa(i), fmt.Sprint("agent-", i%5), []string{"plan", "review"}[i/5%2], uint16(i/50), i)...)
	}
	for b.Loop() {
		comparePairs(turns)
	}
}
