package page

import (
	"slices"
	"strings"
)

// CanonicalPhases is the order in which a thread page shows the phases of a
// pipeline; other phases follow in the order they first appear.
var CanonicalPhases = []string{"plan", "review", "execute", "verify", "revision", "critique", "adjudicate"}

// PhaseKey is how a phase is grouped and filtered: case and surrounding
// space do not make another phase.
func PhaseKey(phase string) string { return strings.ToLower(strings.TrimSpace(phase)) }

// PhaseOrder puts phase keys, given in order of first appearance, in page
// order: the canonical phases first, in their order, then the others.
func PhaseOrder(firstSeen []string) []string {
	order := make([]string, 0, len(firstSeen))
	for _, p := range CanonicalPhases {
		if slices.Contains(firstSeen, p) {
			order = append(order, p)
		}
	}
	for _, key := range firstSeen {
		if !slices.Contains(CanonicalPhases, key) {
			order = append(order, key)
		}
	}
	return order
}

// PhaseName is the heading of a phase group: canonical phases capitalised,
// others as first written.
func PhaseName(key, written string) string {
	switch {
	case key == "":
		return "No phase"
	case slices.Contains(CanonicalPhases, key):
		return strings.ToUpper(key[:1]) + key[1:]
	default:
		return strings.TrimSpace(written)
	}
}
