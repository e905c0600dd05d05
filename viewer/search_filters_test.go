package viewer_test

import (
	"cmp"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// wordlessFixture is a search fixture stored in ClickHouse with a model of
// what each filter keeps, to check the search against.
type wordlessFixture struct {
	h       http.Handler
	turns   []schema.Turn // each once
	starred map[string]bool
	now     time.Time
}

// newWordlessFixture stores three threads in two projects: finished chat
// calls, Bash and Read tool calls (some by a sub-agent), failed calls, a
// running call, an interrupted one, a prompt of messages JSON, phases
// written in two cases, two sessions; some turns stored twice; four
// turns starred and one starred then unstarred.
func newWordlessFixture(t *testing.T) wordlessFixture {
	t.Helper()
	h, conn := newServer(t)
	fx := wordlessFixture{h: h, starred: map[string]bool{}, now: time.Now()}
	threads := []struct{ id, project, session string }{{"th-a", "proj", "sess-a"}, {"th-b", "proj", "sess-b"}, {"th-c", "other", "sess-c"}}
	for i := range 24 {
		th := threads[i%3]
		span := fmt.Sprintf("s%02d", i)
		speaker, phase, model := []string{"claude", "reviewer"}[i%2], []string{"plan", "Execute", "execute"}[i/2%3], []string{"gpt-5", "claude-sonnet"}[i/12]
		p, r := call(th.id, span, phase, 0, speaker, "openai", model, 10*i, fmt.Sprintf("prompt %d about the config", i), fmt.Sprintf("answer %d", i))
		switch i % 6 {
		case 1, 4: // a tool call and its result
			tool := []string{"Bash", "Read"}[i%4/3]
			p.Role, p.TurnID, p.ToolName, p.Content = schema.RoleToolCall, span+":tool_call:0", tool, "ls -la "+span
			r.Role, r.TurnID, r.ToolName, r.Content = schema.RoleToolResult, span+":tool_result:1", tool, "total 0 "+span
			if i%4 == 0 {
				p.Agent, r.Agent = "explorer", "explorer"
			}
		case 2: // failed
			r.Role, r.TurnID, r.Status, r.Error, r.Content = schema.RoleError, span+":error:1", schema.StatusError, "overloaded", "provider returned 529"
		case 5:
			p.Content = `[{"role":"user","parts":[{"type":"text","content":"Plan the release of ` + span + `"}]}]`
		}
		p.SessionID, r.SessionID, p.Project, r.Project = th.session, th.session, th.project, th.project
		fx.turns = append(fx.turns, p, r)
	}
	// A call still running (its recorder beats) and one whose recorder
	// died; neither has an answer.
	run, _ := call("th-a", "run", "verify", 0, "claude", "openai", "gpt-5", 300, "still thinking", "")
	run.HeartbeatNS, run.SessionID = uint64(fx.now.UnixNano()), "sess-a"
	dead, _ := call("th-b", "dead", "verify", 0, "claude", "openai", "gpt-5", 310, "never answered", "")
	dead.SessionID = "sess-b"
	// A turn of the last hour, for a relative time bound.
	recent, _ := call("th-c", "recent", "plan", 0, "claude", "openai", "gpt-5", 0, "just now", "")
	recent.StartNS, recent.Project, recent.SessionID = uint64(fx.now.Add(-time.Hour).UnixNano()), "other", "sess-c"
	fx.turns = append(fx.turns, run, dead, recent)
	testkit.InsertTurns(t, conn, fx.turns...)
	testkit.InsertTurns(t, conn, fx.turns[3], fx.turns[10], fx.turns[31]) // delivered twice

	star := func(turn schema.Turn, on bool) {
		res := send(t, h, http.MethodPut, "/api/threads/"+turn.ThreadID+"/turns/"+url.PathEscape(turn.TurnID)+"/note",
			"application/json", fmt.Sprintf(`{"starred": %t}`, on))
		if res.status != http.StatusOK {
			t.Fatalf("star %s: status %d: %s", turn.TurnID, res.status, res.body)
		}
		fx.starred[turn.TurnID] = on
	}
	star(fx.turns[0], true)
	star(fx.turns[2], true)
	star(fx.turns[9], true)
	star(fx.turns[17], true) // project other
	star(fx.turns[20], true)
	star(fx.turns[20], false) // the newest note decides
	return fx
}

// want is the fixture's turns that the search's parameters keep, newest
// first: the model the search is checked against.
func (fx wordlessFixture) want(params url.Values) []string {
	failed := func(t schema.Turn) bool {
		return t.Status == schema.StatusError || t.Role == schema.RoleError || t.Role == schema.RoleToolResultError
	}
	ended, alive := map[string]bool{}, map[string]bool{}
	for _, t := range fx.turns {
		if t.DurationNS > 0 || failed(t) || t.Role == schema.RoleResponse || t.Role == schema.RoleToolResult {
			ended[t.SpanID] = true
		}
		if max(t.StartNS, t.HeartbeatNS) >= uint64(fx.now.Add(-viewer.DefaultInterruptedAfter).UnixNano()) {
			alive[t.SpanID] = true
		}
	}
	status := func(t schema.Turn) string {
		switch {
		case failed(t):
			return schema.StatusError
		case ended[t.SpanID]:
			return schema.StatusOK
		case alive[t.SpanID]:
			return "running"
		}
		return "interrupted"
	}
	bound := func(v string) uint64 {
		if d, err := time.ParseDuration(v); err == nil {
			return uint64(fx.now.Add(-d).UnixNano())
		}
		at, _ := time.Parse(time.RFC3339, v)
		return uint64(at.UnixNano())
	}
	var kept []schema.Turn
	for _, t := range fx.turns {
		agent := t.Agent
		if agent == "" {
			agent = "main"
		}
		checks := map[string]string{"project": t.Project, "role": t.Role, "tool": t.ToolName, "agent": agent, "session": t.SessionID,
			"speaker": t.Speaker, "model": t.Model, "status": status(t)}
		ok := true
		for name, v := range checks {
			ok = ok && (params.Get(name) == "" || params.Get(name) == v)
		}
		ok = ok && (params.Get("phase") == "" || strings.EqualFold(params.Get("phase"), t.Phase))
		if q := strings.ToLower(params.Get("q")); q != "" {
			ok = ok && (strings.Contains(strings.ToLower(t.Content), q) || strings.Contains(strings.ToLower(t.Speaker), q))
		}
		ok = ok && (params.Get("starred") == "" || fx.starred[t.TurnID])
		ok = ok && (params.Get("from") == "" || t.StartNS >= bound(params.Get("from")))
		ok = ok && (params.Get("to") == "" || t.StartNS <= bound(params.Get("to")))
		if ok {
			kept = append(kept, t)
		}
	}
	slices.SortFunc(kept, func(a, b schema.Turn) int {
		return cmp.Or(cmp.Compare(b.StartNS, a.StartNS), strings.Compare(b.TurnID, a.TurnID))
	})
	ids := []string{}
	for _, t := range kept {
		ids = append(ids, t.TurnID)
	}
	return ids
}

// Each filter alone and several together, with and without a search
// text, find what the model keeps, newest first, each turn once.
func TestSearchWithoutWord(t *testing.T) {
	fx := newWordlessFixture(t)
	queries := []string{
		"role=tool_call", "tool=Bash", "role=tool_call&tool=Bash", "agent=explorer", "agent=main", "session=sess-b",
		"speaker=reviewer", "phase=execute", "phase=EXECUTE", "model=claude-sonnet", "status=ok", "status=error",
		"status=running", "status=interrupted", "starred=1", "project=other", "from=2026-05-01T09:01:00Z",
		"to=2026-05-01T09:01:00Z", "from=2026-05-01T09:00:30Z&to=2026-05-01T09:01:30Z", "from=24h",
		"role=tool_call&tool=Bash&agent=main&project=proj", "starred=1&project=proj", "status=ok&phase=plan&speaker=claude",
		"status=running&project=proj", "status=interrupted&project=other", "model=gpt-5&session=sess-a&role=prompt",
		"q=config&role=prompt", "q=config&starred=1", "q=LS&tool=Read", "q=nothing-here&role=prompt",
	}
	// The model's own answers to a few, spelled out.
	for query, want := range map[string]string{
		"status=running": "[run:prompt:0]", "status=interrupted": "[recent:prompt:0 dead:prompt:0]",
		"starred=1": "[s08:error:1 s04:tool_result:1 s01:tool_call:0 s00:prompt:0]", "agent=explorer&role=tool_call": "[s16:tool_call:0 s04:tool_call:0]",
	} {
		params, _ := url.ParseQuery(query)
		if got := fmt.Sprint(fx.want(params)); got != want {
			t.Errorf("model of %s = %s, want %s", query, got, want)
		}
	}
	for _, query := range queries {
		params, _ := url.ParseQuery(query)
		want := fx.want(params)
		if len(want) == 0 && !strings.Contains(query, "nothing") {
			t.Errorf("%s: the fixture has no turn for it", query)
		}
		if got := searchIDs(t, fx.h, query); !slices.Equal(got, want) {
			t.Errorf("search %s =\n  %q\nwant\n  %q", query, got, want)
		}
	}
}

// Without a search word a hit shows the start of its message text, from
// messages JSON too, never the JSON; each hit names its tool and agent.
func TestSearchWithoutWordSnippets(t *testing.T) {
	fx := newWordlessFixture(t)
	var got searchAnswer
	getJSON(t, fx.h, "/api/search?speaker=reviewer&role=prompt&phase=execute", http.StatusOK, &got)
	var texts []string
	for _, r := range got.Results {
		var b strings.Builder
		for _, s := range r.Snippet {
			if s.Match {
				t.Errorf("hit %s marks %q with no search word", r.TurnID, s.Text)
			}
			b.WriteString(s.Text)
		}
		texts = append(texts, r.TurnID+" "+b.String())
	}
	if !slices.Contains(texts, "s05:prompt:0 Plan the release of s05") || !slices.Contains(texts, "s03:prompt:0 prompt 3 about the config") {
		t.Errorf("snippets %q, want the text of s05's messages and s03's plain prompt", texts)
	}
	getJSON(t, fx.h, "/api/search?agent=explorer&role=tool_call", http.StatusOK, &got)
	if len(got.Results) == 0 || got.Results[0].Tool != "Bash" || got.Results[0].Agent != "explorer" {
		t.Errorf("explorer's tool calls = %+v, want Bash calls by explorer", got.Results)
	}
}

// The menus offer the project's values: its tools, agents, sessions,
// speakers, phases (one key for two spellings) and models; the JSON twin
// echoes the filters.
func TestSearchFacets(t *testing.T) {
	fx := newWordlessFixture(t)
	var got struct {
		Facets struct{ Tools, Agents, Sessions, Speakers, Phases, Models []string }
	}
	getJSON(t, fx.h, "/api/search?project=proj", http.StatusOK, &got)
	if f := got.Facets; fmt.Sprint(f.Tools, f.Agents, f.Sessions, f.Speakers, f.Phases, f.Models) !=
		"[Bash Read] [explorer] [sess-a sess-b] [claude reviewer] [plan execute verify] [claude-sonnet gpt-5]" {
		t.Errorf("facets of proj = %+v", f)
	}
	getJSON(t, fx.h, "/api/search?project=other", http.StatusOK, &got)
	if f := got.Facets; fmt.Sprint(f.Sessions, f.Agents) != "[sess-c] []" {
		t.Errorf("facets of other = %+v, want its session alone and no sub-agent", f)
	}
	var echo struct {
		Project, Tool, Agent, Status string
		Phases                       []string
		Starred                      bool
	}
	getJSON(t, fx.h, "/api/search?project=proj&tool=Bash&phase=Execute&agent=main&starred=1&status=ok", http.StatusOK, &echo)
	if fmt.Sprint(echo) != "{proj Bash main ok [execute] true}" {
		t.Errorf("JSON twin echoes the filters as %+v", echo)
	}
	page := get(t, fx.h, "/search?project=proj&tool=Bash&phase=execute").body
	for _, want := range []string{`<option value="explorer">explorer</option>`, `<option value="execute" selected>execute</option>`,
		`<datalist id="search-tools"><option value="Bash"></option><option value="Read"></option></datalist>`,
		`name="tool" value="Bash"`, `<option value="running">running</option>`} {
		if !strings.Contains(page, want) {
			t.Errorf("search page lacks %s", want)
		}
	}
}

// Paging a filter-only search: two pages, newest first, no turn twice and
// none missed, though some share an instant and some are stored twice;
// the page shows the same turns as its JSON twin, and its Older link
// carries the filters.
func TestSearchWithoutWordPaging(t *testing.T) {
	h, conn := newServer(t)
	var rows, again []schema.Turn
	var want []string
	for i := range 150 {
		p, r := call(fmt.Sprintf("th%d", i%4), fmt.Sprintf("b%03d", i), "execute", 0, "claude", "anthropic", "claude-sonnet", i/3, "", "done")
		p.Role, p.TurnID, p.ToolName, p.Content = schema.RoleToolCall, p.SpanID+":tool_call:0", "Bash", fmt.Sprintf("echo %d", i)
		rows = append(rows, p, r)
		if i%5 == 0 {
			again = append(again, p)
		}
		want = append(want, p.TurnID)
	}
	testkit.InsertTurns(t, conn, rows...)
	testkit.InsertTurns(t, conn, again...)
	slices.SortFunc(want, func(a, b string) int {
		var ai, bi int
		fmt.Sscanf(a, "b%03d", &ai)
		fmt.Sscanf(b, "b%03d", &bi)
		if ai/3 != bi/3 {
			return bi/3 - ai/3
		}
		return strings.Compare(b, a)
	})

	const filters = "role=tool_call&tool=Bash"
	var first, second searchAnswer
	getJSON(t, h, "/api/search?"+filters, http.StatusOK, &first)
	if first.Next == "" || first.Prev != "" {
		t.Fatalf("first page: next %q, prev %q; want a next cursor only", first.Next, first.Prev)
	}
	getJSON(t, h, "/api/search?"+filters+"&after="+url.QueryEscape(first.Next), http.StatusOK, &second)
	var all []string
	for _, r := range append(first.Results, second.Results...) {
		all = append(all, r.TurnID)
	}
	if len(first.Results) != 100 || second.Next != "" || !slices.Equal(all, want) {
		t.Errorf("pages of %d and %d (next %q):\n%q\nwant\n%q", len(first.Results), len(second.Results), second.Next, all, want)
	}

	// The page: the same turns (under their threads), and an Older link.
	page := get(t, h, "/search?"+filters).body
	var hrefs, apiHrefs []string
	for _, m := range regexp.MustCompile(`class="result-link" href="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		hrefs = append(hrefs, html.UnescapeString(m[1]))
	}
	for _, r := range first.Results {
		apiHrefs = append(apiHrefs, r.URL)
	}
	slices.Sort(hrefs)
	slices.Sort(apiHrefs)
	if !slices.Equal(hrefs, apiHrefs) {
		t.Errorf("page links %q\nwant the API's %q", hrefs, apiHrefs)
	}
	next := `rel="next" href="/search?after=` + url.QueryEscape(first.Next) + `&amp;role=tool_call&amp;tool=Bash"`
	if !strings.Contains(page, next) {
		t.Errorf("page lacks the Older link %s", next)
	}
}
