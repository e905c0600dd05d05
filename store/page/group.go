package page

import "slices"

// PhaseGroup is the turns of one phase, by round, as a thread page shows
// them.
type PhaseGroup[T any] struct {
	Key    string          `json:"phase"` // PhaseKey: "" for the turns without a phase
	Name   string          `json:"name"`  // PhaseName: the heading
	Rounds []RoundGroup[T] `json:"rounds"`
}

// RoundGroup is the turns of one round of a phase, in the order said.
type RoundGroup[T any] struct {
	Round uint16 `json:"round"`
	Turns []T    `json:"turns"`
}

// GroupByPhase groups items, in the order said, into phases in page order
// (PhaseOrder), then rounds ascending; at says in which phase and round an
// item was said. view is called once per item, in order, so it may depend on
// the items before.
func GroupByPhase[S, T any](items []S, at func(S) (phase string, round uint16), view func(S) T) []PhaseGroup[T] {
	groups := map[string]*PhaseGroup[T]{}
	var firstSeen []string // phase keys in order of first appearance
	for _, item := range items {
		phase, round := at(item)
		key := PhaseKey(phase)
		g, ok := groups[key]
		if !ok {
			g = &PhaseGroup[T]{Key: key, Name: PhaseName(key, phase)}
			groups[key] = g
			firstSeen = append(firstSeen, key)
		}
		v := view(item)
		i := slices.IndexFunc(g.Rounds, func(r RoundGroup[T]) bool { return r.Round == round })
		if i < 0 {
			i = len(g.Rounds)
			g.Rounds = append(g.Rounds, RoundGroup[T]{Round: round})
		}
		g.Rounds[i].Turns = append(g.Rounds[i].Turns, v)
	}
	out := make([]PhaseGroup[T], 0, len(groups))
	for _, key := range PhaseOrder(firstSeen) {
		g := groups[key]
		slices.SortStableFunc(g.Rounds, func(a, b RoundGroup[T]) int { return int(a.Round) - int(b.Round) })
		out = append(out, *g)
	}
	return out
}
