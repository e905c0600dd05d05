package viewer

import (
	"unicode/utf8"

	"github.com/convtrace/convtrace/store"
)

// compareView is what the compare page renders: the form picking two
// calls of the thread and, when both are picked, the comparison.
type compareView struct {
	Thread       store.Thread
	PickA, PickB string // the call ids the pickers select
	Calls        []callOption
	MaxKB        int // of each side's text compared
	Compared     bool
	comparison
	// Removed and Added count the words (and other non-space units) the
	// diff deletes from a and inserts into b.
	Removed, Added int
	Pairs          []pairLink // the natural partners of a
}

// callOption is a call in the pickers.
type callOption struct{ ID, Label string }

// sideView is one column of the page: a call and its text, the words the
// other lacks marked.
type sideView struct {
	Name   string // A or B
	Side   compareSide
	Chunks []diffChunk
	MaxKB  int
}

// SideA is a's column: its text, what b lacks as delete chunks.
func (v compareView) SideA() sideView { return sideView{"A", v.A, without(v.Diff, opInsert), v.MaxKB} }

// SideB is b's column: its text, what a lacks as insert chunks.
func (v compareView) SideB() sideView { return sideView{"B", v.B, without(v.Diff, opDelete), v.MaxKB} }

func without(chunks []diffChunk, op string) []diffChunk {
	kept := make([]diffChunk, 0, len(chunks))
	for _, d := range chunks {
		if d.Op != op {
			kept = append(kept, d)
		}
	}
	return kept
}

// ThreadURL is the thread's page.
func (v compareView) ThreadURL() string { return threadURL(v.Thread.ID) }

// APIURL is the page's JSON twin.
func (v compareView) APIURL() string {
	return "/api" + compareURL(v.Thread.ID, v.A.Call, v.B.Call)
}

// fill lists the calls of turns (the thread's, in the order said) to pick
// from and, when both sides were read, compares them.
func (v *compareView) fill(turns []store.Turn, sides [2]compareSide, both bool) {
	calls := groupCalls(turns)
	owner := map[string]string{} // call id by its own id and its turns'
	for _, c := range calls {
		v.Calls = append(v.Calls, callOption{ID: c.ID, Label: c.label()})
		owner[c.ID] = c.ID
		for _, t := range c.Turns {
			owner[t.TurnID] = c.ID
		}
	}
	for _, pick := range []*string{&v.PickA, &v.PickB} {
		if id, ok := owner[*pick]; ok {
			*pick = id
		}
	}
	if !both {
		return
	}
	v.Compared, v.comparison = true, compare(sides[0], sides[1])
	v.PickA, v.PickB = v.A.Call, v.B.Call
	// A call older than the listed turns is still one of the choices.
	for _, s := range []compareSide{v.B, v.A} {
		if _, ok := owner[s.Call]; !ok {
			v.Calls = append([]callOption{{ID: s.Call, Label: s.Label}}, v.Calls...)
			owner[s.Call] = s.Call
		}
	}
	for _, d := range v.Diff {
		n := 0
		for _, w := range splitWords(d.Text) {
			if r, _ := utf8.DecodeRuneInString(w); unitKind(r) != kindSpace {
				n++
			}
		}
		switch d.Op {
		case opDelete:
			v.Removed += n
		case opInsert:
			v.Added += n
		}
	}
	v.Pairs = comparePairs(turns)[v.A.Call]
}
