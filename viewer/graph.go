package viewer

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// graphRoutes serves a thread's agent graph: a page with the graph drawn
// as SVG, and its JSON twin.
func (s *Server) graphRoutes(app, api *gin.RouterGroup) {
	app.GET("/threads/:id/graph", s.graphPage)
	api.GET("/threads/:id/graph", s.apiGraph)
}

// Kinds of the graph's nodes and edges.
const (
	nodeSpeaker = "speaker" // an agent: a speaker, else an agent or a model
	nodeTool    = "tool"

	edgeAnswer  = "answer"  // a call answers (reviews, critiques…) another speaker's turn
	edgeHandoff = "handoff" // the last call of a phase is followed by the first of the next
	edgeTool    = "tool"    // a speaker calls a tool
)

// graphNode is a speaker or a tool. A speaker node counts its provider
// calls and their cost; a tool node its tool calls, and the cost of its
// tool turns, when they report one.
type graphNode struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	// NamedBy is the column a speaker's name comes from: speaker, else
	// agent, else model; "" when its turns have none of them.
	NamedBy string   `json:"named_by,omitempty"`
	Calls   int      `json:"calls"`
	CostUSD *float64 `json:"cost_usd"`
	// URL is the thread page showing the node's turns; a node named by a
	// model, or by nothing, has no filter there and links to the thread.
	URL string `json:"url"`
	// FirstPhase is the phase key of the node's first turn with a phase,
	// the column the page draws it in.
	FirstPhase string `json:"first_phase"`
}

// graphEdge is every relation of one kind from one node to another,
// merged: Count answers (answering calls), hand-offs or tool calls, the
// cost of the calls it counts (none for hand-offs), and what they were
// (verbs, phase changes or "calls"), in the order first seen.
type graphEdge struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Kind    string   `json:"kind"`
	Label   string   `json:"label"`
	Count   int      `json:"count"`
	CostUSD *float64 `json:"cost_usd"`
	labels  []string
}

// agentGraph is who answered whom in a thread, who handed off to whom
// between phases, and which tools each used. Outside counts the answers
// (a call and the turn it answers) whose parent turn is not in the
// thread: in another thread, or never stored. They draw no edge.
type agentGraph struct {
	ThreadID string      `json:"thread_id"`
	Title    string      `json:"title"`
	Nodes    []graphNode `json:"nodes"`
	Edges    []graphEdge `json:"edges"`
	Outside  int         `json:"outside_parents"`
}

// answerVerb says how a turn relates to the turn it answers, by the
// turn's own phase, as the thread page says it.
func answerVerb(phase string) string {
	if v := parentVerbs[page.PhaseKey(phase)]; v != "" {
		return v
	}
	return "replies to"
}

// isToolTurn is true of a tool call or its result, which belong to the
// tool's node, not to the speaker's provider calls.
func isToolTurn(role string) bool {
	return role == schema.RoleToolCall || role == schema.RoleToolResult || role == schema.RoleToolResultError
}

// llmCall is one provider call: the turns of one span (a turn without a
// span is a call of its own).
type llmCall struct {
	actor   string // node id
	phase   string
	cost    *float64
	parents []string // the distinct turns it answers
}

// graphBuilder folds a thread's turns, in start order, into its graph.
type graphBuilder struct {
	thread string
	g      agentGraph
	nodes  map[string]int    // node id -> index in g.Nodes
	edges  map[[3]string]int // from, to, kind -> index in g.Edges
	calls  []*llmCall
	byKey  map[string]*llmCall
	actors map[string]string // turn id -> node id of who said it
}

// buildGraph returns the agent graph of thread id from its turns, in the
// order they started (store.GraphTurns).
func buildGraph(id string, turns []store.GraphTurn) agentGraph {
	b := graphBuilder{
		thread: id, g: agentGraph{ThreadID: id, Nodes: []graphNode{}, Edges: []graphEdge{}},
		nodes: map[string]int{}, edges: map[[3]string]int{}, byKey: map[string]*llmCall{}, actors: map[string]string{},
	}
	for _, t := range turns {
		b.add(t)
	}
	b.answers()
	b.handoffs()
	for i := range b.g.Edges {
		b.g.Edges[i].Label = strings.Join(b.g.Edges[i].labels, ", ")
	}
	return b.g
}

// add counts one turn on its speaker's node, or as a tool call.
func (b *graphBuilder) add(t store.GraphTurn) {
	actor := b.speakerNode(t)
	b.actors[t.TurnID] = actor
	if isToolTurn(t.Role) {
		if t.ToolName == "" {
			return
		}
		tool := b.node(nodeTool+":"+t.ToolName, nodeTool, t.ToolName, "", "")
		addCost(&b.g.Nodes[tool].CostUSD, t.CostUSD)
		e := b.edge(actor, b.g.Nodes[tool].ID, edgeTool, "calls")
		addCost(&e.CostUSD, t.CostUSD)
		if t.Role == schema.RoleToolCall {
			b.g.Nodes[tool].Calls++
			e.Count++
		}
		return
	}
	key := t.SpanID
	if key == "" {
		key = "turn:" + t.TurnID
	}
	c := b.byKey[key]
	if c == nil {
		c = &llmCall{actor: actor}
		b.byKey[key] = c
		b.calls = append(b.calls, c)
		b.g.Nodes[b.nodes[actor]].Calls++
	}
	if c.phase == "" {
		c.phase = page.PhaseKey(t.Phase)
	}
	addCost(&c.cost, t.CostUSD)
	addCost(&b.g.Nodes[b.nodes[actor]].CostUSD, t.CostUSD)
	if t.ParentTurnID != "" && !slices.Contains(c.parents, t.ParentTurnID) {
		c.parents = append(c.parents, t.ParentTurnID)
	}
}

// speakerNode returns the id of the node of who said t, added on first
// sight: named by its speaker, else its agent, else its model.
func (b *graphBuilder) speakerNode(t store.GraphTurn) string {
	by, name, link := "", "unnamed", threadURL(b.thread)
	switch {
	case t.Speaker != "":
		by, name, link = "speaker", t.Speaker, threadURL(b.thread)+"?"+url.Values{"speaker": {t.Speaker}}.Encode()
	case t.Agent != "":
		by, name, link = "agent", t.Agent, threadURL(b.thread)+"?"+url.Values{"agent": {t.Agent}}.Encode()
	case t.Model != "":
		by, name = "model", t.Model
	}
	i := b.node(by+":"+name, nodeSpeaker, name, by, link)
	if n := &b.g.Nodes[i]; n.FirstPhase == "" {
		n.FirstPhase = page.PhaseKey(t.Phase)
	}
	return b.g.Nodes[i].ID
}

// node returns the index of node id, added on first sight.
func (b *graphBuilder) node(id, kind, name, by, link string) int {
	if i, ok := b.nodes[id]; ok {
		return i
	}
	if kind == nodeTool {
		link = threadURL(b.thread) + "?" + url.Values{"tool": {name}}.Encode()
	}
	b.nodes[id] = len(b.g.Nodes)
	b.g.Nodes = append(b.g.Nodes, graphNode{ID: id, Kind: kind, Name: name, NamedBy: by, URL: link})
	return b.nodes[id]
}

// edge returns the edge of kind from one node to another, added on first
// sight, with label among its labels.
func (b *graphBuilder) edge(from, to, kind, label string) *graphEdge {
	key := [3]string{from, to, kind}
	i, ok := b.edges[key]
	if !ok {
		i = len(b.g.Edges)
		b.edges[key] = i
		b.g.Edges = append(b.g.Edges, graphEdge{From: from, To: to, Kind: kind})
	}
	e := &b.g.Edges[i]
	if !slices.Contains(e.labels, label) {
		e.labels = append(e.labels, label)
	}
	return e
}

// answers draws an edge from each call's speaker to the speaker of each
// turn it answers; a speaker answering itself draws none.
func (b *graphBuilder) answers() {
	for _, c := range b.calls {
		for _, p := range c.parents {
			to, ok := b.actors[p]
			switch {
			case !ok:
				b.g.Outside++
			case to != c.actor:
				e := b.edge(c.actor, to, edgeAnswer, answerVerb(c.phase))
				e.Count++
				addCost(&e.CostUSD, c.cost)
			}
		}
	}
}

// handoffs draws an edge from the speaker of the last call of a phase to
// the speaker of the first call of the next, calls in start order; calls
// without a phase hand nothing off.
func (b *graphBuilder) handoffs() {
	var prev *llmCall
	for _, c := range b.calls {
		if c.phase == "" {
			continue
		}
		if prev != nil && prev.phase != c.phase && prev.actor != c.actor {
			b.edge(prev.actor, c.actor, edgeHandoff, prev.phase+" → "+c.phase).Count++
		}
		prev = c
	}
}

// addCost adds c to *sum; an unknown c leaves it as it is, so a sum stays
// unknown (nil) until some cost is known.
func addCost(sum **float64, c *float64) {
	if c == nil {
		return
	}
	v := *c
	if *sum != nil {
		v += **sum
	}
	*sum = &v
}

// graphPage renders a thread's agent graph: the SVG, a legend, and its
// nodes and edges as tables.
func (s *Server) graphPage(c *gin.Context) {
	weight, err := parseWeight(c.Query("weight"))
	if err != nil {
		s.pageError(c, err)
		return
	}
	g, err := s.loadGraph(c)
	if errors.Is(err, store.ErrNotFound) {
		s.html(c, http.StatusNotFound, "notfound.html", "No thread has the id "+c.Param("id")+".")
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "graph.html", newGraphView(g, weight))
}

// apiGraph answers GET /api/threads/:id/graph with the agent graph's
// nodes and edges.
func (s *Server) apiGraph(c *gin.Context) {
	g, err := s.loadGraph(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, g)
}

// loadGraph reads the thread of the request and, side by side, the turns
// its graph is drawn from.
func (s *Server) loadGraph(c *gin.Context) (agentGraph, error) {
	id := c.Param("id")
	var (
		thread store.Thread
		turns  []store.GraphTurn
	)
	g, ctx := errgroup.WithContext(c.Request.Context())
	g.Go(func() (err error) { thread, err = s.store.Thread(ctx, id); return err })
	g.Go(func() (err error) { turns, err = s.store.GraphTurns(ctx, id); return err })
	if err := g.Wait(); err != nil {
		return agentGraph{}, err
	}
	graph := buildGraph(id, turns)
	graph.Title = thread.Title
	return graph, nil
}
