package viewer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// What node sizes and edge widths scale with (the weight parameter).
const (
	weightCalls = "calls"
	weightCost  = "cost"
)

// parseWeight reads the weight parameter: calls (the default) or cost.
func parseWeight(v string) (string, error) {
	switch v {
	case "", weightCalls:
		return weightCalls, nil
	case weightCost:
		return weightCost, nil
	}
	return "", page.BadParam("weight", "%q is not calls or cost", v)
}

// The layout, in SVG user units (pixels at scale 1): speakers in columns
// by the phase they first spoke in, canonical phases first; tools in a
// last column; a label to the right of each node.
const (
	graphMargin  = 16.0
	graphTop     = 40.0 // below the column headings
	columnGap    = 40.0 // between a column's widest label and the next column's nodes
	rowGap       = 76.0
	toolRowGap   = 48.0
	minRadius    = 9.0
	maxRadius    = 26.0
	minHalf      = 6.0 // half the side of a tool's square
	maxHalf      = 13.0
	labelGap     = 8.0
	nameWidth    = 7.6 // of a narrow character of a node's name, roughly
	figureWidth  = 6.4 // of a narrow character of its figures
	labelUnits   = 22  // a label's length in narrow characters before it is cut
	minEdgeWidth = 1.5
	maxEdgeWidth = 8.0
	arrowLength  = 9.0
)

// graphView is the agent graph page: the graph, laid out.
type graphView struct {
	Graph         agentGraph
	Weight        string
	ThreadURL     string
	APIURL        string
	Width, Height int
	ShiftX        float64 // how far right everything is drawn, to make room for curves
	Columns       []graphColumn
	Nodes         []svgNode
	Edges         []svgEdge
}

// graphColumn is the heading of a column of nodes.
type graphColumn struct {
	X     float64
	Label string
}

// svgNode is a node where it is drawn, with its label cut to fit and its
// full name and figures in Title.
type svgNode struct {
	graphNode
	X, Y, R   float64 // centre; radius, or half the side of a tool's square
	Tool      bool
	Label     string
	Figures   string
	Title     string
	TextX     float64
	NameY     float64
	FiguresY  float64
	SquareX   float64 // top left corner of a tool's square
	SquareY   float64
	SquareLen float64
}

// svgEdge is an edge drawn as a curve from node to node.
type svgEdge struct {
	graphEdge
	FromName, ToName string
	FromURL, ToURL   string
	KindName         string
	Counted          string // "2 calls", "1 hand-off"
	Title            string
	Path             string
	Width            float64
	left             float64 // the smallest x of its curve
}

// kindNames are the edge kinds as the page says them.
var kindNames = map[string]string{edgeAnswer: "answers", edgeHandoff: "hand-off", edgeTool: "tool use"}

// newGraphView lays g out, node sizes and edge widths scaled by weight.
func newGraphView(g agentGraph, weight string) graphView {
	v := graphView{Graph: g, Weight: weight, ThreadURL: threadURL(g.ThreadID), APIURL: apiThreadURL(g.ThreadID) + "/graph"}
	nodeWeight := func(n graphNode) float64 {
		if weight == weightCost {
			return costOf(n.CostUSD)
		}
		return float64(n.Calls)
	}
	var speakers, tools []graphNode
	maxSpeaker, maxTool := 0.0, 0.0
	for _, n := range g.Nodes {
		if n.Kind == nodeTool {
			tools = append(tools, n)
			maxTool = max(maxTool, nodeWeight(n))
		} else {
			speakers = append(speakers, n)
			maxSpeaker = max(maxSpeaker, nodeWeight(n))
		}
	}
	slices.SortStableFunc(tools, func(a, b graphNode) int { return strings.Compare(a.Name, b.Name) })
	phases, columns := phaseColumns(speakers)
	rows := 0
	for _, col := range columns {
		rows = max(rows, len(col))
	}
	height := max(float64(rows)*rowGap, float64(len(tools))*toolRowGap)
	radius := func(n graphNode) float64 {
		return minRadius + (maxRadius-minRadius)*scale(nodeWeight(n), maxSpeaker)
	}
	x := graphMargin + maxRadius
	for i, col := range columns {
		x = v.column(page.PhaseName(phases[i], phases[i]), col, x, height, rowGap, radius)
	}
	if len(tools) > 0 {
		x = v.column("Tools", tools, x, height, toolRowGap, func(n graphNode) float64 {
			return minHalf + (maxHalf-minHalf)*scale(nodeWeight(n), maxTool)
		})
	}
	v.Width = int(math.Ceil(x - columnGap - maxRadius + graphMargin))
	v.Height = int(math.Ceil(graphTop + height + graphMargin))
	v.Edges = layoutEdges(g.Edges, v.Nodes, weight)
	// Edges along the first column bend left of it: shift everything right
	// to make room.
	for _, e := range v.Edges {
		v.ShiftX = max(v.ShiftX, math.Ceil(graphMargin-e.left))
	}
	v.Width += int(v.ShiftX)
	return v
}

// phaseColumns groups speakers by the phase they first spoke in, the
// phases in page order and those without one last, each column in the
// order its speakers first spoke.
func phaseColumns(speakers []graphNode) (phases []string, columns [][]graphNode) {
	for _, n := range speakers {
		if n.FirstPhase != "" && !slices.Contains(phases, n.FirstPhase) {
			phases = append(phases, n.FirstPhase)
		}
	}
	phases = page.PhaseOrder(phases)
	if slices.ContainsFunc(speakers, func(n graphNode) bool { return n.FirstPhase == "" }) {
		phases = append(phases, "")
	}
	columns = make([][]graphNode, len(phases))
	for i, p := range phases {
		for _, n := range speakers {
			if n.FirstPhase == p {
				columns[i] = append(columns[i], n)
			}
		}
	}
	return phases, columns
}

// column places nodes one under another at x, gap apart and centred in
// height, each of size, under heading; it returns the x of the next
// column, clear of this one's widest label.
func (v *graphView) column(heading string, nodes []graphNode, x, height, gap float64, size func(graphNode) float64) float64 {
	v.Columns = append(v.Columns, graphColumn{X: round1(x - maxRadius), Label: heading})
	top := graphTop + (height-float64(len(nodes))*gap)/2
	labels := 0.0
	for j, n := range nodes {
		node := placeNode(n, x, top+(float64(j)+0.5)*gap, size(n))
		v.Nodes = append(v.Nodes, node)
		labels = max(labels, node.labelWidth())
	}
	return x + 2*maxRadius + labelGap + labels + columnGap
}

// placeNode puts n's centre at x, y with radius (or half side) r.
func placeNode(n graphNode, x, y, r float64) svgNode {
	s := svgNode{graphNode: n, X: round1(x), Y: round1(y), R: round1(r), Tool: n.Kind == nodeTool}
	s.Label = cutLabel(n.Name, labelUnits)
	s.Figures = plural(n.Calls, "call")
	if n.CostUSD != nil || !s.Tool {
		s.Figures += " · " + formatCost(n.CostUSD)
	}
	s.Title = n.Name + ": " + s.Figures
	s.TextX, s.NameY, s.FiguresY = round1(x+r+labelGap), round1(y-4), round1(y+15)
	if s.Tool {
		s.SquareX, s.SquareY, s.SquareLen = round1(x-r), round1(y-r), round1(2*r)
	}
	return s
}

// labelWidth is about how wide n's label is drawn, its name or its
// figures, whichever is longer.
func (n svgNode) labelWidth() float64 {
	return max(float64(textUnits(n.Label))*nameWidth, float64(textUnits(n.Figures))*figureWidth)
}

// layoutEdges draws each edge as a quadratic curve between its nodes'
// edges, bent to one side so that the edges between two nodes, either
// way, and those along a column stay apart.
func layoutEdges(edges []graphEdge, nodes []svgNode, weight string) []svgEdge {
	at := map[string]*svgNode{}
	for i := range nodes {
		at[nodes[i].ID] = &nodes[i]
	}
	edgeWeight := func(e graphEdge) float64 {
		if weight == weightCost {
			return costOf(e.CostUSD)
		}
		return float64(e.Count)
	}
	top := 0.0
	for _, e := range edges {
		top = max(top, edgeWeight(e))
	}
	seen := map[[2]string]int{} // edges drawn so far between two nodes, this way
	out := make([]svgEdge, 0, len(edges))
	for _, e := range edges {
		from, to := at[e.From], at[e.To]
		pair := [2]string{e.From, e.To}
		s := svgEdge{
			graphEdge: e, FromName: from.Name, ToName: to.Name, FromURL: from.URL, ToURL: to.URL,
			KindName: kindNames[e.Kind],
			Width:    round1(minEdgeWidth + (maxEdgeWidth-minEdgeWidth)*scale(edgeWeight(e), top)),
		}
		q := curve(from, to, seen[pair])
		s.Path, s.left = q.path(), q.left()
		seen[pair]++
		unit := "call"
		if e.Kind == edgeHandoff {
			unit = "hand-off"
		}
		s.Counted = plural(e.Count, unit)
		figures := s.Counted
		if e.CostUSD != nil {
			figures += " · " + formatCost(e.CostUSD)
		}
		s.Title = fmt.Sprintf("%s → %s, %s %s: %s", from.Name, to.Name, s.KindName, e.Label, figures)
		out = append(out, s)
	}
	return out
}

// quad is a quadratic Bézier curve: from s, bent toward c, to e.
type quad struct{ sx, sy, cx, cy, ex, ey float64 }

// path is q as an SVG path.
func (q quad) path() string {
	return fmt.Sprintf("M%.1f %.1f Q%.1f %.1f %.1f %.1f", q.sx, q.sy, q.cx, q.cy, q.ex, q.ey)
}

// left is the smallest x of q: an end, or where it turns back.
func (q quad) left() float64 {
	x := min(q.sx, q.ex)
	if d := q.sx - 2*q.cx + q.ex; d != 0 {
		if t := (q.sx - q.cx) / d; t > 0 && t < 1 {
			x = min(x, (1-t)*(1-t)*q.sx+2*(1-t)*t*q.cx+t*t*q.ex)
		}
	}
	return x
}

// curve is the k-th edge from a to b: it leaves a's boundary toward the
// bend and ends an arrow's length before b's.
func curve(a, b *svgNode, k int) quad {
	dx, dy := b.X-a.X, b.Y-a.Y
	length := math.Hypot(dx, dy)
	bend := 14 + 0.1*length + 18*float64(k)
	cx, cy := (a.X+b.X)/2-dy/length*bend, (a.Y+b.Y)/2+dx/length*bend
	if math.Abs(dx) < 1 { // along a column: left of it, around the nodes between and away from the labels
		bend = 24 + 0.3*length + 18*float64(k)
		if dy > 0 { // apart from the edges the other way
			bend += 16
		}
		cx, cy = a.X-bend, (a.Y+b.Y)/2
	}
	toward := func(x, y, d float64) (float64, float64) {
		l := math.Hypot(cx-x, cy-y)
		return x + (cx-x)/l*d, y + (cy-y)/l*d
	}
	sx, sy := toward(a.X, a.Y, a.R)
	ex, ey := toward(b.X, b.Y, b.R+arrowLength)
	return quad{sx, sy, cx, cy, ex, ey}
}

// scale maps w in [0, top] to [0, 1] by its square root, so that an area
// (a node) or a width grows with w without the largest dwarfing the rest.
func scale(w, top float64) float64 {
	if top <= 0 || w <= 0 {
		return 0
	}
	return math.Sqrt(w / top)
}

// costOf is a known cost, or 0.
func costOf(c *float64) float64 {
	if c == nil {
		return 0
	}
	return *c
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// plural writes n things, with thousands separators.
func plural(n int, unit string) string {
	if n != 1 {
		unit += "s"
	}
	return store.FormatCount(uint64(n)) + " " + unit
}

// cutLabel cuts s to units narrow characters, a wide one (CJK, emoji)
// counting two, the last one a … when cut.
func cutLabel(s string, units int) string {
	if textUnits(s) <= units {
		return s
	}
	used := 0
	for i, r := range s {
		if used += runeUnits(r); used > units-1 {
			return s[:i] + "…"
		}
	}
	return s
}

// textUnits is how many narrow characters s takes.
func textUnits(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

// runeUnits is how many narrow characters r takes, roughly: two from the
// Hangul jamo up, where the wide scripts begin.
func runeUnits(r rune) int {
	if r >= 0x1100 {
		return 2
	}
	return 1
}
