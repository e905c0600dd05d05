package page

import (
	"reflect"
	"testing"
)

func TestGroupByPhase(t *testing.T) {
	type turn struct {
		id, phase string
		round     uint16
	}
	at := func(t turn) (string, uint16) { return t.phase, t.round }
	id := func(t turn) string { return t.id }
	// In the order said: a revision between review rounds, a phase of the
	// pipeline's own, and a turn without a phase.
	turns := []turn{
		{"a", "Plan", 0}, {"b", "review", 0}, {"c", "revision", 0}, {"d", "Review", 1},
		{"e", "triage", 0}, {"f", "", 0}, {"g", "plan", 1}, {"h", "Plan", 0}, {"i", "execute", 0},
	}
	var order []string
	got := GroupByPhase(turns, at, func(t turn) string { order = append(order, t.id); return t.id })
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
	if got := GroupByPhase(nil, at, id); len(got) != 0 {
		t.Errorf("GroupByPhase(nil) = %v, want none", got)
	}
}
