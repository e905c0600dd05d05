package viewer_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
)

// compareJSON is GET /api/threads/:id/compare as a client reads it.
type compareJSON struct {
	ThreadID string      `json:"thread_id"`
	A        sideJSON    `json:"a"`
	B        sideJSON    `json:"b"`
	Changed  bool        `json:"changed"`
	Diff     []chunkJSON `json:"diff"`
	MaxBytes int         `json:"max_bytes"`
}

type sideJSON struct {
	Call      string   `json:"call"`
	TurnIDs   []string `json:"turn_ids"`
	Speaker   string   `json:"speaker"`
	Phase     string   `json:"phase"`
	Round     uint16   `json:"round"`
	Role      string   `json:"role"`
	Model     string   `json:"model"`
	Status    string   `json:"status"`
	TokensIn  *uint32  `json:"tokens_in"`
	TokensOut *uint32  `json:"tokens_out"`
	CostUSD   *float64 `json:"cost_usd"`
	Text      string   `json:"text"`
	Cut       bool     `json:"cut"`
}

type chunkJSON struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

type pairJSON struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
	Call  string `json:"call"`
	URL   string `json:"url"`
}

type pairsJSON struct {
	ThreadID string     `json:"thread_id"`
	Call     string     `json:"call"`
	Pairs    []pairJSON `json:"pairs"`
}

func compareAPI(thread, a, b string) string {
	return "/api/threads/" + url.PathEscape(thread) + "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
}

func pairsAPI(thread, call string) string {
	return "/api/threads/" + url.PathEscape(thread) + "/compare/pairs?call=" + url.QueryEscape(call)
}

// demoTurns reads the demo thread's turns and returns the one of each
// speaker, phase and role, in the order said.
func demoTurns(t *testing.T, h http.Handler, thread string) func(speaker, phase, role string) []store.Turn {
	t.Helper()
	var res struct{ Turns []store.Turn }
	getJSON(t, h, "/api/threads/"+thread+"/turns", http.StatusOK, &res)
	return func(speaker, phase, role string) []store.Turn {
		var ts []store.Turn
		for _, x := range res.Turns {
			if x.Speaker == speaker && x.Phase == phase && x.Role == role {
				ts = append(ts, x)
			}
		}
		if len(ts) == 0 {
			t.Fatalf("demo thread: no %s turn of %s in %s", role, speaker, phase)
		}
		return ts
	}
}

// The demo run compared through the API: the two planners' plans (one
// side named by its prompt, the other by its span), a call with itself, a
// chat-messages answer on its text, a failed call, a tool's arguments and
// result; the natural pairs of its calls; and unknown or foreign ids.
func TestCompareDemo(t *testing.T) {
	h, conn, thread := demoServer(t)
	find := demoTurns(t, h, thread)
	claudePrompt, claudePlan := find("claude-planner", "plan", "prompt")[0], find("claude-planner", "plan", "response")[0]
	codexPlan := find("codex-planner", "plan", "response")[0]

	var cmp compareJSON
	getJSON(t, h, compareAPI(thread, claudePrompt.TurnID, codexPlan.SpanID), http.StatusOK, &cmp)
	if cmp.A.Call != claudePlan.SpanID || !reflect.DeepEqual(cmp.A.TurnIDs, []string{claudePlan.TurnID}) || cmp.A.Text != claudePlan.Content {
		t.Errorf("a, the claude-planner's prompt: compared call %s turns %v text %.40q; want its answer %s", cmp.A.Call, cmp.A.TurnIDs, cmp.A.Text, claudePlan.TurnID)
	}
	if cmp.B.Speaker != "codex-planner" || cmp.B.Phase != "plan" || cmp.B.Round != 0 || cmp.B.Text != codexPlan.Content || cmp.B.Model != codexPlan.Model {
		t.Errorf("b, the codex-planner's span: %+v", cmp.B)
	}
	if *cmp.A.TokensIn != *claudePlan.TokensIn || *cmp.A.TokensOut != *claudePlan.TokensOut || *cmp.A.CostUSD != *claudePlan.CostUSD {
		t.Errorf("a's usage: in %d out %d $%g; the response turn has in %d out %d $%g",
			*cmp.A.TokensIn, *cmp.A.TokensOut, *cmp.A.CostUSD, *claudePlan.TokensIn, *claudePlan.TokensOut, *claudePlan.CostUSD)
	}
	want := []chunkJSON{{"equal", "Plan "}, {"delete", "A"}, {"insert", "B"}, {"equal", " — "}}
	if !cmp.Changed || len(cmp.Diff) < 4 || !reflect.DeepEqual(cmp.Diff[:4], want) {
		t.Errorf("plan A against plan B: changed %v, diff starts %q, want %q", cmp.Changed, cmp.Diff[:min(4, len(cmp.Diff))], want)
	}

	// A response with itself, named by its turn and by its span: nothing
	// changed.
	getJSON(t, h, compareAPI(thread, claudePlan.TurnID, claudePlan.SpanID), http.StatusOK, &cmp)
	if cmp.Changed || !reflect.DeepEqual(cmp.Diff, []chunkJSON{{"equal", claudePlan.Content}}) {
		t.Errorf("a plan with itself: changed %v, diff %q", cmp.Changed, cmp.Diff)
	}

	// The executor answers in chat messages JSON: compared on their text.
	exec := find("codex-executor", "execute", "response")
	getJSON(t, h, compareAPI(thread, exec[0].TurnID, exec[1].SpanID), http.StatusOK, &cmp)
	if !strings.HasPrefix(exec[0].Content, `{"role":"assistant"`) {
		t.Fatalf("the demo executor's first answer is no chat message: %.60q", exec[0].Content)
	}
	if !strings.HasPrefix(cmp.A.Text, "→ read_file(") || !strings.HasPrefix(cmp.B.Text, "→ apply_patch(") ||
		strings.Contains(cmp.A.Text+cmp.B.Text, "tool_calls") {
		t.Errorf("executor answers compared as JSON, not text:\n a %.80q\n b %.80q", cmp.A.Text, cmp.B.Text)
	}

	// The verifier's first attempt failed; its retry answered.
	verifyErr, verifyOK := find("claude-verifier", "verify", "error")[0], find("claude-verifier", "verify", "response")[0]
	getJSON(t, h, compareAPI(thread, verifyErr.SpanID, verifyOK.SpanID), http.StatusOK, &cmp)
	if cmp.A.Role != "error" || cmp.A.Status != "error" || cmp.A.Text != "provider returned 529 overloaded_error: overloaded" {
		t.Errorf("the failed attempt: role %q status %q text %q", cmp.A.Role, cmp.A.Status, cmp.A.Text)
	}

	// A tool call's own turn compares its arguments, indented; its span,
	// its result.
	runs := find("codex-executor", "execute", "tool_call")
	var tests []store.Turn
	for _, r := range runs {
		if r.ToolName == "run_tests" {
			tests = append(tests, r)
		}
	}
	getJSON(t, h, compareAPI(thread, tests[0].TurnID, tests[1].SpanID), http.StatusOK, &cmp)
	if cmp.A.Text != "{\n  \"path\": \"test/config.test.ts\"\n}" || cmp.A.Role != "tool_call" {
		t.Errorf("run_tests' arguments: %q (%s)", cmp.A.Text, cmp.A.Role)
	}
	if cmp.B.Role != "tool_result" || !strings.Contains(cmp.B.Text, "5 passed") {
		t.Errorf("the second run_tests' result: %q (%s)", cmp.B.Text, cmp.B.Role)
	}

	t.Run("pairs", func(t *testing.T) {
		revision := find("claude-planner", "revision", "response")[0]
		pairsOf := func(id string) pairsJSON {
			var p pairsJSON
			getJSON(t, h, pairsAPI(thread, id), http.StatusOK, &p)
			return p
		}
		p := pairsOf(claudePlan.TurnID)
		var labels []string
		for _, l := range p.Pairs {
			labels = append(labels, l.Kind+": "+l.Label)
			if l.Label == "vs revision r1" && (l.Call != revision.SpanID || l.URL != "/threads/"+thread+"/compare?a="+claudePlan.SpanID+"&b="+revision.SpanID) {
				t.Errorf("plan → revision pair: %+v", l)
			}
		}
		slices.Sort(labels)
		wantLabels := []string{"round: vs revision r1", "speaker: vs adjudicator, plan r0", "speaker: vs claude-critic, plan r0",
			"speaker: vs codex-critic, plan r0", "speaker: vs codex-planner, plan r0"}
		if p.Call != claudePlan.SpanID || !reflect.DeepEqual(labels, wantLabels) {
			t.Errorf("pairs of the claude-planner's plan: call %s %q, want %s %q", p.Call, labels, claudePlan.SpanID, wantLabels)
		}
		reviews := find("reviewer", "review", "response")
		for i, tt := range []struct {
			id   string
			want []pairJSON
		}{
			{reviews[0].SpanID, []pairJSON{{"round", "vs round 1", reviews[1].SpanID, "/threads/" + thread + "/compare?a=" + reviews[0].SpanID + "&b=" + reviews[1].SpanID}}},
			{reviews[1].TurnID, []pairJSON{{"round", "vs round 0", reviews[0].SpanID, "/threads/" + thread + "/compare?a=" + reviews[1].SpanID + "&b=" + reviews[0].SpanID}}},
			{verifyOK.TurnID, []pairJSON{{"sequence", "vs previous call", verifyErr.SpanID, "/threads/" + thread + "/compare?a=" + verifyOK.SpanID + "&b=" + verifyErr.SpanID}}},
			{tests[0].TurnID, []pairJSON{{"sequence", "vs next run_tests", tests[1].SpanID, "/threads/" + thread + "/compare?a=" + tests[0].SpanID + "&b=" + tests[1].SpanID}}},
		} {
			if got := pairsOf(tt.id).Pairs; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("case %d: pairs of %s\n got %+v\nwant %+v", i, tt.id, got, tt.want)
			}
		}
		if got := pairsOf(find("adjudicator", "plan", "response")[0].SpanID).Pairs; len(got) != 4 {
			t.Errorf("the adjudicator pairs with the four other speakers of plan r0, got %+v", got)
		}
	})

	t.Run("bad ids", func(t *testing.T) {
		op, or := call("other-thread", "other-span", "plan", 0, "claude-planner", "anthropic", "claude", 0, "q", "a plan of another thread")
		testkit.InsertTurns(t, conn, op, or)
		for _, tt := range []struct {
			path   string
			status int
			want   string
		}{
			{compareAPI(thread, "nope", codexPlan.SpanID), http.StatusNotFound, `a: thread ` + thread + ` has no turn or call with the id \"nope\"`},
			{compareAPI(thread, codexPlan.SpanID, "other-span"), http.StatusNotFound, `b: thread ` + thread + ` has no turn or call with the id \"other-span\"`},
			{compareAPI(thread, codexPlan.SpanID, or.TurnID), http.StatusNotFound, `b: thread ` + thread + ` has no turn or call`},
			{"/api/threads/" + thread + "/compare?a=" + codexPlan.SpanID, http.StatusBadRequest, "b: missing"},
			{compareAPI("no-such-thread", "x", "y"), http.StatusNotFound, "not found"},
			{pairsAPI(thread, "nope"), http.StatusNotFound, `call: thread ` + thread + ` has no turn or call with the id \"nope\"`},
			{"/api/threads/" + thread + "/compare/pairs", http.StatusBadRequest, "call: missing"},
		} {
			res := get(t, h, tt.path)
			if res.status != tt.status || !strings.Contains(res.body, tt.want) {
				t.Errorf("GET %s: %d %s; want %d with %q", tt.path, res.status, res.body, tt.status, tt.want)
			}
		}
		res := get(t, h, "/threads/"+thread+"/compare?a=nope&b="+codexPlan.SpanID)
		if res.status != http.StatusNotFound || !strings.Contains(res.body, "a: thread "+thread+" has no turn or call with the id &#34;nope&#34;.") {
			t.Errorf("compare page with an unknown id: %d\n%s", res.status, res.body)
		}
	})

	t.Run("page", func(t *testing.T) {
		res := get(t, h, "/threads/"+thread+"/compare?a="+claudePlan.SpanID+"&b="+codexPlan.TurnID)
		if res.status != http.StatusOK {
			t.Fatalf("compare page: %d\n%s", res.status, res.body)
		}
		for _, want := range []string{
			`<option value="` + claudePlan.SpanID + `" selected>claude-planner · plan r0 · `,
			`<option value="` + codexPlan.SpanID + `" selected>codex-planner · plan r0 · `,
			`<pre class="compare-text">Plan <del>A</del> — `,
			`<pre class="compare-text">Plan <ins>B</ins> — `,
			`>vs revision r1</a>`,
			`<span class="tokens">in 120 · out `,
		} {
			if !strings.Contains(res.body, want) {
				t.Errorf("compare page lacks %q", want)
			}
		}
		if n := strings.Count(res.body, `<option value="`+claudePlan.SpanID+`"`); n != 2 {
			t.Errorf("the claude-planner's plan is %d options, want one in each picker", n)
		}
		res = get(t, h, "/threads/"+thread+"/compare")
		if res.status != http.StatusOK || !strings.Contains(res.body, `<select name="a" required>`) || strings.Contains(res.body, "compare-sides") {
			t.Errorf("compare page without calls: %d, want the pickers only\n%s", res.status, res.body)
		}
		// One side named by its answer's turn: the pickers only, that call
		// chosen in A.
		res = get(t, h, "/threads/"+thread+"/compare?a="+claudePlan.TurnID)
		if res.status != http.StatusOK || strings.Contains(res.body, "compare-sides") ||
			strings.Count(res.body, `<option value="`+claudePlan.SpanID+`" selected>`) != 1 {
			t.Errorf("compare page with a alone: %d, want the pickers with a's call selected\n%s", res.status, res.body)
		}
	})
}

// Hand-made calls: the exact word diff of two answers (emoji, Japanese,
// markup escaped), an answer in chat messages JSON equal to one in text,
// long answers cut, and the pairs of two rounds and two speakers.
func TestCompareHandMade(t *testing.T) {
	h, conn := newServer(t)
	const th = "cmp-th"
	textA := "Plan: ship 🚀 today\n\n東京は雨です — <b>bold</b>"
	textB := "Plan: ship 🚢 tomorrow\n\n東京は晴れです — <b>bold</b>"
	messagesA := `[{"role":"assistant","parts":[{"type":"text","content":"Plan: ship 🚀 today\n\n東京は雨です — <b>bold</b>"}]}]`
	p1, r1 := call(th, "s1", "draft", 0, "writer", "openai", "gpt-5", 0, "write", textA)
	p2, r2 := call(th, "s2", "draft", 1, "writer", "openai", "gpt-5", 10, "again", textB)
	p3, r3 := call(th, "s3", "draft", 1, "editor", "anthropic", "claude", 20, "edit", messagesA)
	long := strings.Repeat("word ", 60<<10) // 300 KB
	p4, r4 := call(th, "s4", "long", 0, "writer", "openai", "gpt-5", 30, "long", long)
	p5, r5 := call(th, "s5", "long", 0, "editor", "openai", "gpt-5", 40, "long", "changed "+long)
	r1.TokensIn, r1.TokensOut, r1.CostUSD = u32(11), u32(22), f64(0.5)
	testkit.InsertTurns(t, conn, p1, r1, p2, r2, p3, r3, p4, r4, p5, r5)

	var cmp compareJSON
	getJSON(t, h, compareAPI(th, "s1", "s2"), http.StatusOK, &cmp)
	want := []chunkJSON{
		{"equal", "Plan: ship "}, {"delete", "🚀 today"}, {"insert", "🚢 tomorrow"}, {"equal", "\n\n東京は"},
		{"delete", "雨"}, {"insert", "晴れ"}, {"equal", "です — <b>bold</b>"},
	}
	if !reflect.DeepEqual(cmp.Diff, want) || !cmp.Changed {
		t.Errorf("s1 against s2:\n got %q\nwant %q", cmp.Diff, want)
	}
	if *cmp.A.TokensIn != 11 || *cmp.A.TokensOut != 22 || *cmp.A.CostUSD != 0.5 || cmp.B.TokensIn != nil || cmp.B.CostUSD != nil {
		t.Errorf("usage: a %v/%v/%v, b %v/%v; want 11/22/0.5 and unknown", *cmp.A.TokensIn, *cmp.A.TokensOut, *cmp.A.CostUSD, cmp.B.TokensIn, cmp.B.CostUSD)
	}
	getJSON(t, h, compareAPI(th, "s1", r3.TurnID), http.StatusOK, &cmp)
	if cmp.Changed || cmp.B.Text != textA {
		t.Errorf("text against the same text in messages JSON: changed %v, b's text %q", cmp.Changed, cmp.B.Text)
	}

	getJSON(t, h, compareAPI(th, "s4", "s5"), http.StatusOK, &cmp)
	if !cmp.A.Cut || !cmp.B.Cut || len(cmp.A.Text) != cmp.MaxBytes || cmp.MaxBytes != 200<<10 {
		t.Errorf("300 KB answers: cut %v %v, a's text %d bytes, max %d; want both cut at 200 KB", cmp.A.Cut, cmp.B.Cut, len(cmp.A.Text), cmp.MaxBytes)
	}
	// Shifted by a word, a's cut ends in "word ", b's in "wo".
	edits := []chunkJSON{cmp.Diff[0], cmp.Diff[1], cmp.Diff[len(cmp.Diff)-2], cmp.Diff[len(cmp.Diff)-1]}
	if want := []chunkJSON{{"delete", "word"}, {"insert", "changed"}, {"delete", "word "}, {"insert", "wo"}}; len(cmp.Diff) != 5 || !reflect.DeepEqual(edits, want) {
		t.Errorf("300 KB answers: %d chunks, edits %q; want 5 chunks, edits %q", len(cmp.Diff), edits, want)
	}
	page := get(t, h, "/threads/"+th+"/compare?a=s4&b=s5").body
	if n := strings.Count(page, "Only the first 200 KB of this answer are compared."); n != 2 {
		t.Errorf("the page says %d times that an answer is cut, want 2", n)
	}
	page = get(t, h, "/threads/"+th+"/compare?a=s1&b=s2").body
	if !strings.Contains(page, "<del>🚀 today</del>") || !strings.Contains(page, "<ins>晴れ</ins>です — &lt;b&gt;bold&lt;/b&gt;</pre>") {
		t.Errorf("the page does not mark the diff or escape the answer:\n%s", page)
	}

	var p pairsJSON
	getJSON(t, h, pairsAPI(th, "s2"), http.StatusOK, &p)
	wantPairs := []pairJSON{
		{"round", "vs round 0", "s1", "/threads/cmp-th/compare?a=s2&b=s1"},
		{"speaker", "vs editor, draft r1", "s3", "/threads/cmp-th/compare?a=s2&b=s3"},
	}
	if !reflect.DeepEqual(p.Pairs, wantPairs) {
		t.Errorf("pairs of s2:\n got %+v\nwant %+v", p.Pairs, wantPairs)
	}
}
