package viewer

import (
	"math"
	"testing"
)

// A name is cut to the room of a label, a wide character taking two
// narrow ones' room and the … one.
func TestCutLabel(t *testing.T) {
	tests := []struct {
		in    string
		units int
		want  string
	}{
		{"reviewer", 22, "reviewer"},
		{"exactly-ten", 11, "exactly-ten"},
		{"twelve-chars", 11, "twelve-cha…"},
		{"검토자검토자검토자", 10, "검토자검…"}, // two units each, and one for …
		{"검토자", 6, "검토자"},
		{"ab🚀cd", 4, "ab…"},
	}
	for _, tt := range tests {
		if got := cutLabel(tt.in, tt.units); got != tt.want {
			t.Errorf("cutLabel(%q, %d) = %q, want %q", tt.in, tt.units, got, tt.want)
		}
	}
}

// The leftmost point of a curve, which the layout keeps in view.
func TestQuadLeft(t *testing.T) {
	tests := []struct {
		name string
		q    quad
		want float64
	}{
		{"straight", quad{10, 0, 20, 0, 30, 0}, 10},
		{"bent left of both ends", quad{100, 0, 0, 50, 100, 100}, 50},
		{"bent right", quad{100, 0, 200, 50, 100, 100}, 100},
	}
	for _, tt := range tests {
		if got := tt.q.left(); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: left of %+v = %v, want %v", tt.name, tt.q, got, tt.want)
		}
	}
}

// A thread without turns has a graph without nodes: empty lists in its
// JSON, not null.
func TestBuildGraphOfNothing(t *testing.T) {
	g := buildGraph("th", nil)
	if len(g.Nodes) != 0 || len(g.Edges) != 0 || g.Nodes == nil || g.Edges == nil {
		t.Errorf("empty thread: %+v, want empty (not null) nodes and edges", g)
	}
}
