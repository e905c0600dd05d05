package store

import (
	"reflect"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

func TestGroupByPhase(t *testing.T) {
	turn := func(id, phase string, round uint16) Turn {
		return Turn{Turn: schema.Turn{TurnID: id, Phase: phase, Round: round}}
	}
	// In the order said: a revision between review rounds, a phase of the
	// pipeline's own, and a turn without a phase.
	turns := []Turn{
		turn("a", "Plan", 0), turn("b", "review", 0), turn("c", "revision", 0), turn("d", "Review", 1),
		turn("e", "triage", 0), turn("f", "", 0), turn("g", "plan", 1), turn("h", "Plan", 0), turn("i", "execute", 0),
	}
	var order []string
	got := GroupByPhase(turns, func(t Turn) string { order = append(order, t.TurnID); return t.TurnID })
	want := []PhaseGroup[string]{
		{Key: "plan", Name: "Plan", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"a", "h"}}, {Round: 1, Turns: []string{"g"}}}},
		{Key: "review", Name: "Review", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"b"}}, {Round: 1, Turns: []string{"d"}}}},
		{Key: "execute", Name: "Execute", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"i"}}}},
		{Key: "revision", Name: "Revision", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"c"}}}},
		{Key: "triage", Name: "triage", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"e"}}}},
		{Key: "", Name: "No phase", Rounds: []RoundGroup[string]{{Round: 0, Turns: []string{"f"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GroupByPhase of %v:\ngot  %+v\nwant %+v", turns, got, want)
	}
	if wantOrder := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}; !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("view called in order %v, want the order said %v", order, wantOrder)
	}
	if got := GroupByPhase(nil, func(t Turn) string { return t.TurnID }); len(got) != 0 {
		t.Errorf("GroupByPhase(nil) = %v, want none", got)
	}
}
