package viewer_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/page"
	"github.com/convtrace/convtrace/viewer"
)

// graphJSON is GET /api/threads/:id/graph as a client reads it.
type graphJSON struct {
	ThreadID string `json:"thread_id"`
	Title    string `json:"title"`
	Nodes    []struct {
		ID, Kind, Name, URL string
		NamedBy             string   `json:"named_by"`
		Calls               int      `json:"calls"`
		CostUSD             *float64 `json:"cost_usd"`
		FirstPhase          string   `json:"first_phase"`
	} `json:"nodes"`
	Edges []struct {
		From, To, Kind, Label string
		Count                 int      `json:"count"`
		CostUSD               *float64 `json:"cost_usd"`
	} `json:"edges"`
	Outside int `json:"outside_parents"`
}

// costText writes a cost to compare, rounded far below a cent's
// millionth so that the order of a float sum does not matter; nil is "-".
func costText(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.9f", *c)
}

// The planner's name holds every character HTML and XML escape.
const oddPlanner = `plan<&"'>ner`

// graphFixture writes thread g1: two planners' rounds of review and
// revision, a critique whose response is stored twice (the newer copy
// cheaper), an executor without a speaker (named by its agent) that uses
// two tools and answers a turn never stored and itself, a call with only a
// model answering a turn of thread g2, a verifier, and an internal turn.
func graphFixture(t *testing.T) (http.Handler, string) {
	t.Helper()
	h, conn := newServer(t)
	var turns []schema.Turn
	llm := func(span, phase, speaker, agent, model string, start int, parent string, cost *float64) string {
		p, r := call("g1", span, phase, 0, speaker, "openai", model, start, "ask "+span, "answer "+span)
		p.Agent, r.Agent = agent, agent
		p.ParentTurnID, r.ParentTurnID = parent, parent
		r.CostUSD = cost
		turns = append(turns, p, r)
		return r.TurnID
	}
	tool := func(span, name string, start int) {
		c := schema.Turn{TurnID: span + ":tool_call:0", SpanID: span, ThreadID: "g1", Project: "proj", Phase: "execute",
			Agent: "sub-agent", Role: schema.RoleToolCall, ToolName: name, ToolCallID: "call-" + span, Status: schema.StatusOK, StartNS: at(start)}
		r := c
		r.TurnID, r.Role, r.Seq = span+":tool_result:1", schema.RoleToolResult, 1
		turns = append(turns, c, r)
	}
	p1 := llm("p1", "plan", oddPlanner, "", "gpt-5", 0, "", f64(0.01))
	c1 := llm("c1", "critique", "critic", "", "gpt-5", 2, p1, f64(0.5))
	r1 := llm("r1", "review", "reviewer", "", "qwen", 4, p1, nil)
	p2 := llm("p2", "revision", oddPlanner, "", "gpt-5", 6, r1, f64(0.03))
	r2 := llm("r2", "review", "reviewer", "", "qwen", 8, p2, nil)
	p3 := llm("p3", "revision", oddPlanner, "", "gpt-5", 10, r2, f64(0.04))
	llm("r3", "review", "reviewer", "", "qwen", 12, p3, nil)
	e1 := llm("e1", "execute", "", "sub-agent", "gpt-5", 14, "gone:response:1", f64(0.005))
	tool("t1", "grep", 15)
	tool("t2", "grep", 16)
	tool("t3", "read_file", 17)
	llm("e2", "execute", "", "sub-agent", "gpt-5", 18, e1, f64(0.006))
	llm("m1", "execute", "", "", "gpt-5", 20, "x:response:1", f64(0.007))
	llm("v1", "verify", "verifier", "", "claude", 22, e1, f64(0.001))
	n := len(turns)
	llm("ghost", "verify", "ghost", "", "claude", 24, p1, f64(9))
	turns[n].Internal, turns[n+1].Internal = true, true
	testkit.InsertTurns(t, conn, turns...)

	// The critique's response again, a newer revision that cost less.
	var again schema.Turn
	for _, tt := range turns {
		if tt.TurnID == c1 {
			again = tt
		}
	}
	again.CostUSD, again.Revision = f64(0.02), 1
	testkit.InsertTurns(t, conn, again)
	xp, xr := call("g2", "x", "plan", 0, "elsewhere", "openai", "gpt-5", 0, "q", "a")
	testkit.InsertTurns(t, conn, xp, xr)
	return h, "g1"
}

// The graph's nodes and edges, counts and costs, as computed here from the
// fixture's rows: each call once, the stored-twice response by its newest
// copy, answers to turns outside the thread and to oneself drawing no edge.
func TestGraphAPI(t *testing.T) {
	h, thread := graphFixture(t)
	var g graphJSON
	getJSON(t, h, "/api/threads/"+thread+"/graph", http.StatusOK, &g)

	sum := func(cs ...float64) *float64 {
		v := 0.0
		for _, c := range cs {
			v += c
		}
		return &v
	}
	planner := "speaker:" + oddPlanner
	wantNodes := []string{
		fmt.Sprintf("%s speaker speaker 3 %s plan /threads/g1?speaker=plan%%3C%%26%%22%%27%%3Ener", planner, costText(sum(0.01, 0.03, 0.04))),
		fmt.Sprintf("speaker:critic speaker speaker 1 %s critique /threads/g1?speaker=critic", costText(f64(0.02))),
		"speaker:reviewer speaker speaker 3 - review /threads/g1?speaker=reviewer",
		fmt.Sprintf("agent:sub-agent speaker agent 2 %s execute /threads/g1?agent=sub-agent", costText(sum(0.005, 0.006))),
		"tool:grep tool  2 -  /threads/g1?tool=grep",
		"tool:read_file tool  1 -  /threads/g1?tool=read_file",
		fmt.Sprintf("model:gpt-5 speaker model 1 %s execute /threads/g1", costText(f64(0.007))),
		fmt.Sprintf("speaker:verifier speaker speaker 1 %s verify /threads/g1?speaker=verifier", costText(f64(0.001))),
	}
	var gotNodes []string
	for _, n := range g.Nodes {
		gotNodes = append(gotNodes, fmt.Sprintf("%s %s %s %d %s %s %s", n.ID, n.Kind, n.NamedBy, n.Calls, costText(n.CostUSD), n.FirstPhase, n.URL))
	}
	if got, want := strings.Join(gotNodes, "\n"), strings.Join(wantNodes, "\n"); got != want {
		t.Errorf("nodes:\n%s\nwant:\n%s", got, want)
	}

	wantEdges := []string{
		"agent:sub-agent → tool:grep tool calls 2 -",
		"agent:sub-agent → tool:read_file tool calls 1 -",
		"speaker:critic → " + planner + " answer critiques 1 " + costText(f64(0.02)),
		"speaker:reviewer → " + planner + " answer reviews 3 -",
		planner + " → speaker:reviewer answer revises 2 " + costText(sum(0.03, 0.04)),
		"speaker:verifier → agent:sub-agent answer verifies 1 " + costText(f64(0.001)),
		planner + " → speaker:critic handoff plan → critique 1 -",
		"speaker:critic → speaker:reviewer handoff critique → review 1 -",
		"speaker:reviewer → " + planner + " handoff review → revision 2 -",
		planner + " → speaker:reviewer handoff revision → review 2 -",
		"speaker:reviewer → agent:sub-agent handoff review → execute 1 -",
		"model:gpt-5 → speaker:verifier handoff execute → verify 1 -",
	}
	var gotEdges []string
	for _, e := range g.Edges {
		gotEdges = append(gotEdges, fmt.Sprintf("%s → %s %s %s %d %s", e.From, e.To, e.Kind, e.Label, e.Count, costText(e.CostUSD)))
	}
	if got, want := strings.Join(gotEdges, "\n"), strings.Join(wantEdges, "\n"); got != want {
		t.Errorf("edges:\n%s\nwant:\n%s", got, want)
	}
	// e1 answers a turn never stored, m1 one of thread g2.
	if g.Outside != 2 {
		t.Errorf("outside_parents %d, want 2", g.Outside)
	}
	if g.ThreadID != thread || g.Title == "" {
		t.Errorf("thread %q titled %q, want %q with a title", g.ThreadID, g.Title, thread)
	}
}

// svgElement is an element of the graph's SVG as encoding/xml reads it.
type svgElement struct {
	XMLName  xml.Name
	Attrs    []xml.Attr   `xml:",any,attr"`
	Children []svgElement `xml:",any"`
	Text     string       `xml:",chardata"`
}

func (e svgElement) attr(name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// walk calls fn on e and every element below it.
func (e svgElement) walk(fn func(svgElement)) {
	fn(e)
	for _, c := range e.Children {
		c.walk(fn)
	}
}

// graphSVG returns the <svg> of a graph page, parsed as XML: it must be
// well-formed on its own.
func graphSVG(t *testing.T, page string) svgElement {
	t.Helper()
	start := strings.Index(page, `<svg class="agent-graph"`)
	end := strings.Index(page[max(start, 0):], "</svg>")
	if start < 0 || end < 0 {
		t.Fatalf("no graph svg in page:\n%s", page)
	}
	var root svgElement
	if err := xml.Unmarshal([]byte(page[start:start+end+len("</svg>")]), &root); err != nil {
		t.Fatalf("graph svg is not XML: %v\n%s", err, page[start:start+end])
	}
	return root
}

// The page's SVG parses as XML; every node is a link to its calls with its
// full name in a title, names with <, & and quotes escaped; every edge has
// its figures in a title and a row of the table.
func TestGraphPage(t *testing.T) {
	h, thread := graphFixture(t)
	res := get(t, h, "/threads/"+thread+"/graph")
	if res.status != http.StatusOK {
		t.Fatalf("GET graph page: status %d\n%s", res.status, res.body)
	}
	if strings.Contains(res.body, oddPlanner) {
		t.Errorf("the page holds the name %q unescaped", oddPlanner)
	}
	if !strings.Contains(res.body, "plan&lt;&amp;&#34;&#39;&gt;ner") {
		t.Errorf("the page does not show the planner's name escaped")
	}
	svg := graphSVG(t, res.body)
	links := map[string]string{} // name -> href
	titles := map[string]string{}
	edges := 0
	svg.walk(func(e svgElement) {
		switch e.XMLName.Local {
		case "a":
			name := e.attr("data-name")
			links[name] = e.attr("href")
			for _, c := range e.Children {
				if c.XMLName.Local == "title" {
					titles[name] = c.Text
				}
			}
		case "path":
			if strings.Contains(e.attr("class"), "edge") {
				edges++
				if len(e.Children) != 1 || !strings.Contains(e.Children[0].Text, "→") {
					t.Errorf("edge %s has no title with its figures", e.attr("d"))
				}
			}
		}
	})
	wantLinks := map[string]string{
		oddPlanner: "/threads/g1?" + url.Values{"speaker": {oddPlanner}}.Encode(),
		"critic":   "/threads/g1?speaker=critic", "reviewer": "/threads/g1?speaker=reviewer",
		"verifier": "/threads/g1?speaker=verifier", "sub-agent": "/threads/g1?agent=sub-agent",
		"gpt-5": "/threads/g1", "grep": "/threads/g1?tool=grep", "read_file": "/threads/g1?tool=read_file",
	}
	if len(links) != len(wantLinks) {
		t.Errorf("%d node links %v, want %d", len(links), links, len(wantLinks))
	}
	for name, want := range wantLinks {
		if links[name] != want {
			t.Errorf("node %q links to %q, want %q", name, links[name], want)
		}
	}
	if want := oddPlanner + ": 3 calls · $0.08"; titles[oddPlanner] != want {
		t.Errorf("planner's title %q, want %q", titles[oddPlanner], want)
	}
	if edges != 12 {
		t.Errorf("%d edges drawn, want 12", edges)
	}
	if rows := strings.Count(res.body[strings.Index(res.body, "graph-edges"):], "<tr class=\"edge-"); rows != 12 {
		t.Errorf("%d rows in the edge table, want 12", rows)
	}
	if !strings.Contains(res.body, "2 answers are to a turn outside this thread") {
		t.Errorf("the page does not say that 2 answers draw no edge")
	}
}

// A long name is cut on the graph with its full name in the node's title;
// weight=cost sizes by cost; an unknown weight is a 400 naming it.
func TestGraphPageNamesAndWeights(t *testing.T) {
	h, conn := newServer(t)
	long := strings.Repeat("very-long-speaker-name-", 4)
	a, b := call("w1", "a", "plan", 0, long, "openai", "gpt-5", 0, "q", "a")
	c, d := call("w1", "b", "review", 0, "짧은", "openai", "gpt-5", 2, "q", "a")
	b.CostUSD, d.CostUSD = f64(1), f64(0.01)
	c.ParentTurnID = b.TurnID
	testkit.InsertTurns(t, conn, a, b, c, d)

	page := get(t, h, "/threads/w1/graph").body
	svg := graphSVG(t, page)
	var names, titles []string
	radius := map[string]string{}
	svg.walk(func(e svgElement) {
		if e.XMLName.Local != "a" {
			return
		}
		for _, c := range e.Children {
			switch {
			case c.XMLName.Local == "title":
				titles = append(titles, c.Text)
			case c.attr("class") == "node-name":
				names = append(names, c.Text)
			case c.XMLName.Local == "circle":
				radius[e.attr("data-name")] = c.attr("r")
			}
		}
	})
	if len(names) != 2 || !strings.HasSuffix(names[0], "…") || len([]rune(names[0])) > 22 || names[1] != "짧은" {
		t.Errorf("node labels %q, want the long name cut to 22 characters ending in … and 짧은 whole", names)
	}
	if len(titles) != 2 || !strings.HasPrefix(titles[0], long+": ") {
		t.Errorf("node titles %q, want the long name whole", titles)
	}
	if radius[long] != radius["짧은"] {
		t.Errorf("by calls, radii %v, want equal (one call each)", radius)
	}
	svg = graphSVG(t, get(t, h, "/threads/w1/graph?weight=cost").body)
	radius = map[string]string{}
	svg.walk(func(e svgElement) {
		for _, c := range e.Children {
			if c.XMLName.Local == "circle" {
				radius[e.attr("data-name")] = c.attr("r")
			}
		}
	})
	if radius[long] != "26" || radius["짧은"] == "26" {
		t.Errorf("by cost, radii %v, want the $1 speaker's the largest (26) and the other's smaller", radius)
	}
	res := get(t, h, "/threads/w1/graph?weight=tokens")
	if res.status != http.StatusBadRequest || !strings.Contains(res.body, "weight") {
		t.Errorf("weight=tokens: status %d, want 400 naming weight:\n%s", res.status, res.body)
	}
}

// An unknown thread is a 404, page and API; a thread of internal turns
// only has a graph without nodes.
func TestGraphUnknownOrEmptyThread(t *testing.T) {
	h, conn := newServer(t)
	for _, path := range []string{"/threads/nope/graph", "/api/threads/nope/graph"} {
		if res := get(t, h, path); res.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, res.status)
		}
	}
	p, r := call("quiet", "a", "plan", 0, "planner", "openai", "gpt-5", 0, "q", "a")
	p.Internal, r.Internal = true, true
	testkit.InsertTurns(t, conn, p, r)
	var g graphJSON
	if body := getJSON(t, h, "/api/threads/quiet/graph", http.StatusOK, &g); len(g.Nodes) != 0 || !strings.Contains(body, `"nodes":[]`) {
		t.Errorf("graph of internal turns only: %s, want no nodes", body)
	}
	if res := get(t, h, "/threads/quiet/graph"); res.status != http.StatusOK || !strings.Contains(res.body, "no turns to draw") {
		t.Errorf("page of internal turns only: status %d, want 200 saying so:\n%s", res.status, res.body)
	}
}

// The demo run's graph: one node per speaker, with the calls and cost SQL
// counts for it, the reviewer answering the chosen planner twice, the
// verifier's retried call answering the executor twice, and the
// executor's tools.
func TestGraphOfDemo(t *testing.T) {
	h, conn, thread := demoServer(t)
	var g graphJSON
	getJSON(t, h, "/api/threads/"+thread+"/graph", http.StatusOK, &g)

	rows, err := conn.Query(context.Background(), `
SELECT speaker, uniqExact(span_id), sum(cost_usd)
FROM conversations
WHERE thread_id = ? AND role NOT IN ('tool_call', 'tool_result', 'tool_result_error')
GROUP BY speaker
ORDER BY speaker`, thread)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for rows.Next() {
		var (
			speaker string
			calls   uint64
			cost    *float64
		)
		if err := rows.Scan(&speaker, &calls, &cost); err != nil {
			t.Fatal(err)
		}
		if speaker == "reviewer" {
			cost = nil // its provider reports no usage: unknown, not 0
		}
		want = append(want, fmt.Sprintf("%s %d %s", speaker, calls, costText(cost)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	edges := map[string]string{}
	for _, n := range g.Nodes {
		if n.Kind == "speaker" {
			got = append(got, fmt.Sprintf("%s %d %s", n.Name, n.Calls, costText(n.CostUSD)))
		}
	}
	for _, e := range g.Edges {
		edges[e.From+" → "+e.To+" "+e.Kind] = fmt.Sprintf("%s %d", e.Label, e.Count)
	}
	slices.Sort(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("speaker nodes:\n%s\nwant (from SQL):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for edge, want := range map[string]string{
		"speaker:reviewer → speaker:claude-planner answer":         "reviews 2",
		"speaker:claude-verifier → speaker:codex-executor answer":  "verifies 2",
		"speaker:codex-executor → tool:run_tests tool":             "calls 2",
		"speaker:codex-executor → tool:read_file tool":             "calls 1",
		"speaker:codex-executor → tool:apply_patch tool":           "calls 1",
		"speaker:adjudicator → speaker:reviewer handoff":           "plan → review 1",
		"speaker:codex-executor → speaker:claude-verifier handoff": "execute → verify 1",
	} {
		if edges[edge] != want {
			t.Errorf("edge %s: %q, want %q", edge, edges[edge], want)
		}
	}
}

// bigGraphThread writes thread id of 1,000 turns: 350 provider calls of
// 20 speakers over the seven canonical phases, each answering the call
// before it, and 150 calls of 30 tools.
func bigGraphThread(t testing.TB, conn driver.Conn, id string) {
	t.Helper()
	var turns []schema.Turn
	prev := ""
	for i := range 350 {
		speaker := fmt.Sprintf("agent-%02d-%s", i%20, strings.Repeat("x", i%20))
		phase := page.CanonicalPhases[(i/10)%len(page.CanonicalPhases)]
		span := fmt.Sprintf("c%03d", i)
		p, r := call(id, span, phase, 0, speaker, "openai", "gpt-5", 3*i, "ask", "answer")
		p.ParentTurnID, r.ParentTurnID, r.CostUSD = prev, prev, f64(0.001*float64(i%7))
		turns = append(turns, p, r)
		prev = r.TurnID
		if i%7 < 3 {
			span := fmt.Sprintf("t%03d", i)
			c := schema.Turn{TurnID: span + ":tool_call:0", SpanID: span, ThreadID: id, Phase: phase, Speaker: speaker,
				Role: schema.RoleToolCall, ToolName: fmt.Sprintf("tool_%02d", i%30), Status: schema.StatusOK, StartNS: at(3*i + 2)}
			res := c
			res.TurnID, res.Role, res.Seq = span+":tool_result:1", schema.RoleToolResult, 1
			turns = append(turns, c, res)
		}
	}
	testkit.InsertTurns(t, conn, turns...)
}

// A 1,000-turn thread of 20 speakers and 30 tools: every speaker and tool
// is a node, and the page is the same when drawn twice.
func TestGraphOfLargeThread(t *testing.T) {
	h, conn := newServer(t)
	bigGraphThread(t, conn, "big")
	var g graphJSON
	getJSON(t, h, "/api/threads/big/graph", http.StatusOK, &g)
	kinds := map[string]int{}
	calls := 0
	for _, n := range g.Nodes {
		kinds[n.Kind]++
		calls += n.Calls
	}
	if kinds["speaker"] != 20 || kinds["tool"] != 30 || calls != 350+150 {
		t.Errorf("%v nodes with %d calls, want 20 speakers and 30 tools with 500", kinds, calls)
	}
	first, second := get(t, h, "/threads/big/graph").body, get(t, h, "/threads/big/graph").body
	if first != second {
		t.Errorf("the page differs between two draws")
	}
	graphSVG(t, first)
}

// BenchmarkGraph measures the agent graph of a 1,000-turn thread: its
// JSON (the read and the fold) and its page (the layout and the SVG).
func BenchmarkGraph(b *testing.B) {
	conn, _ := testkit.Open(b)
	bigGraphThread(b, conn, "big")
	h := viewer.New(conn).Handler()
	for _, path := range []string{"/api/threads/big/graph", "/threads/big/graph"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, newRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: status %d", path, rec.Code)
				}
			}
		})
	}
}
