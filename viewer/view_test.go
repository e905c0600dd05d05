package viewer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

func TestFormat(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	f64 := func(v float64) *float64 { return &v }
	tests := []struct{ got, want string }{
		{formatCount[uint32](nil), "—"},
		{formatCount(u32(0)), "0"},
		{formatCount(u32(999)), "999"},
		{formatCount(u32(1000)), "1,000"},
		{formatCount(u32(1234567)), "1,234,567"},
		{formatCost(nil), "—"},
		{formatCost(f64(0)), "$0.00"},
		{formatCost(f64(0.5)), "$0.50"},
		{formatCost(f64(0.0042)), "$0.0042"},
		{formatCost(f64(12.34567)), "$12.3457"},
		{formatDuration(0), ""},
		{formatDuration(1_234_567), "1ms"},
		{formatDuration(412_345), "412µs"},
		{formatDuration(2_345_678_901), "2.35s"},
		{threadURL("team/a b?"), "/threads/team%2Fa%20b%3F"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestProviderClass(t *testing.T) {
	if got := providerClass("OpenAI"); got != "prov-0" {
		t.Errorf("providerClass(OpenAI) = %q, want prov-0", got)
	}
	if got := providerClass(""); got != "prov-none" {
		t.Errorf("providerClass('') = %q, want prov-none", got)
	}
	// Any name maps into the fixed palette, the same way every time.
	for _, p := range []string{"x.ai", `"><script>`, "groq", "アンソロピック"} {
		got := providerClass(p)
		if len(got) != len("prov-0") || got < "prov-0" || got > "prov-7" || got != providerClass(p) {
			t.Errorf("providerClass(%q) = %q, want one of prov-0 … prov-7", p, got)
		}
	}
}

func TestNewThreadView(t *testing.T) {
	turn := func(id, phase string, round uint16) store.Turn {
		return store.Turn{Turn: schema.Turn{TurnID: id, Phase: phase, Round: round, Role: "prompt"}}
	}
	tests := []struct {
		name  string
		turns []store.Turn
		want  string // phases as Name[round:ids…]…
	}{
		{
			name:  "canonical order, case-insensitive",
			turns: []store.Turn{turn("a", "Verify", 0), turn("b", "PLAN", 0), turn("c", "plan", 0), turn("d", "Review", 0)},
			want:  "Plan[0:b,c] Review[0:d] Verify[0:a]",
		},
		{
			name:  "others follow by first appearance, empty phase included",
			turns: []store.Turn{turn("a", "deploy", 0), turn("b", "", 0), turn("c", "Adjudicate", 0), turn("d", "Cleanup", 0), turn("e", "deploy", 0)},
			want:  "Adjudicate[0:c] deploy[0:a,e] No phase[0:b] Cleanup[0:d]",
		},
		{
			name:  "rounds ascending, turns in order inside",
			turns: []store.Turn{turn("a", "revision", 2), turn("b", "revision", 1), turn("c", "revision", 2), turn("d", "revision", 10)},
			want:  "Revision[1:b][2:a,c][10:d]",
		},
		{name: "no turns", want: ""},
	}
	for _, tt := range tests {
		v := newThreadView(store.Thread{}, tt.turns, "")
		var parts []string
		for _, p := range v.Phases {
			s := p.Name
			for _, r := range p.Rounds {
				var ids []string
				for _, c := range r.Calls {
					ids = append(ids, c.Turns[0].TurnID)
				}
				s += fmt.Sprintf("[%d:%s]", r.Round, strings.Join(ids, ","))
			}
			parts = append(parts, s)
		}
		if got := strings.Join(parts, " "); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A card gathers the turns of one span, names the call it answers, and
// shows the start of a long text.
func TestCalls(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	f64 := func(v float64) *float64 { return &v }
	turns := []store.Turn{
		{Turn: schema.Turn{TurnID: "p0", SpanID: "a", TraceID: "t", Speaker: "planner", Phase: "plan", Role: "prompt", StartNS: 100}},
		{Turn: schema.Turn{TurnID: "p1", SpanID: "a", TraceID: "t", Speaker: "planner", Phase: "plan", Role: "response", Content: "plan",
			StartNS: 150, DurationNS: 50, TokensIn: u32(10), TokensOut: u32(5), CostUSD: f64(0.5)}},
		{Turn: schema.Turn{TurnID: "c0", SpanID: "b", Speaker: "critic", Phase: "Critique", ParentTurnID: "p1", Role: "prompt", StartNS: 300}},
		{Turn: schema.Turn{TurnID: "c1", SpanID: "b", Speaker: "critic", Phase: "Critique", ParentTurnID: "p1", Role: "response",
			Content: strings.Repeat("l\n", 31), StartNS: 310, Status: "error", Error: "boom"}},
		{Turn: schema.Turn{TurnID: "x", Phase: "execute", ParentTurnID: "elsewhere", Role: "system", Content: "note", StartNS: 400}},
	}
	calls := buildCards(viewsOf(turns), "")
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s:%s:%d:%d:%s:%s:%v:%s", c.ID, c.Kind, len(c.Turns), c.DurationNS, c.ParentVerb, c.ParentCall,
			c.Failed, formatCost(c.CostUSD)))
	}
	want := []string{
		"call-a:llm:2:50:::false:$0.50",
		"call-b:llm:2:0:critiques:call-a:true:—",
		"call-x:note:1:0:replies to::false:—",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("calls\n got %q\nwant %q", got, want)
	}
	if c := calls[0]; *c.TokensIn != 10 || *c.TokensOut != 5 || c.DetailURL != "/traces/t/spans/a/detail" {
		t.Errorf("call a: tokens %d → %d, detail %q", *c.TokensIn, *c.TokensOut, c.DetailURL)
	}
	if c := calls[1]; c.ParentLabel != "planner · plan · response" {
		t.Errorf("critique's parent label %q", c.ParentLabel)
	}
	// 31 lines show 30, cut.
	if body := calls[1].Turns[1]; !body.Cut || !body.Text.Cut || strings.Count(body.Text.Segs[0].Text, "\n") != previewLines {
		t.Errorf("long answer: cut %v, shown %q", body.Cut, body.Text.Segs[0].Text)
	}
	if (turnView{Turn: store.Turn{Turn: schema.Turn{Content: "boom", Error: "boom"}}, Failed: true}).ShowContent() {
		t.Error("an error turn whose content is its message shows the message twice")
	}
}

// An answer's tool call carries the run of that tool, its result under it;
// the run is no card of its own.
func TestCallsNestToolRuns(t *testing.T) {
	answer := `{"role":"assistant","content":null,"tool_calls":[{"id":"k1","type":"function","function":{"name":"apply_patch","arguments":"{\"patch\":\"--- a\\n+++ b\\n\",\"n\":2}"}}]}`
	turns := []store.Turn{
		{Turn: schema.Turn{TurnID: "r", SpanID: "llm", Role: "response", Content: answer}},
		{Turn: schema.Turn{TurnID: "tc", SpanID: "tool", Role: "tool_call", ToolCallID: "k1", ToolName: "apply_patch", Content: `{"patch":"x"}`}},
		{Turn: schema.Turn{TurnID: "tr", SpanID: "tool", Role: "tool_result", ToolCallID: "k1", ToolName: "apply_patch", Content: "applied"}},
		{Turn: schema.Turn{TurnID: "lone", SpanID: "other", Role: "tool_call", ToolCallID: "k9", ToolName: "ls", Content: `[1,2]`}},
	}
	calls := buildCards(viewsOf(turns), "")
	if len(calls) != 2 || calls[0].ID != "call-llm" || calls[1].ID != "call-other" || calls[1].Kind != callTool {
		t.Fatalf("cards %+v", calls)
	}
	msgs := calls[0].Turns[0].Messages
	if len(msgs) != 1 || len(msgs[0].Calls) != 1 {
		t.Fatalf("answer messages %+v", msgs)
	}
	tc := msgs[0].Calls[0]
	var args []string
	for _, a := range tc.Args {
		args = append(args, fmt.Sprintf("%s=%q/%v", a.Name, a.Value.Segs[0].Text, a.Code))
	}
	if tc.Name != "apply_patch" || strings.Join(args, " ") != `n="2"/false patch="--- a\n+++ b\n"/true` {
		t.Errorf("tool call %s args %v", tc.Name, args)
	}
	if tc.Run == nil || len(tc.Run.Turns) != 2 || tc.Run.Turns[1].TurnID != "tr" {
		t.Errorf("tool run %+v", tc.Run)
	}
	if lone := calls[1].Turns[0].Args; len(lone) != 1 || lone[0].Value.Segs[0].Text != "[\n  1,\n  2\n]" {
		t.Errorf("arguments that are no object: %+v", lone)
	}
}

// An agent run's turns after its own calls (its answer, its error, a line
// it said between calls) follow those calls on a card of their own; a
// call's turns around another's stay one card, and so do a tool's around
// its sub-agent's calls.
func TestCallsFollowTheirOwnCalls(t *testing.T) {
	turn := func(id, span, parent, role string) store.Turn {
		return store.Turn{Turn: schema.Turn{TurnID: id, SpanID: span, ParentSpanID: parent, Role: role, ToolCallID: map[bool]string{true: "k-" + span}[strings.HasPrefix(role, "tool")]}}
	}
	for _, tc := range []struct {
		name  string
		turns []store.Turn
		want  string // cards: id[turns]
	}{
		{"run answers after its calls", []store.Turn{
			turn("p", "run", "", "prompt"), turn("s", "run", "", "system"),
			turn("a", "chat1", "run", "response"), turn("tc", "tool", "run", "tool_call"), turn("tr", "tool", "run", "tool_result"),
			turn("u", "run", "", "unknown"), turn("b", "chat2", "run", "response"), turn("r", "run", "", "response"), turn("e", "run", "", "error"),
		}, "call-run[p s] call-chat1[a] call-tool[tc tr] call-run-2[u] call-chat2[b] call-run-3[r e]"},
		{"grandchildren count", []store.Turn{
			turn("p", "run", "", "prompt"), turn("a", "chat1", "task", "response"), turn("r", "run", "", "response"), turn("task", "task", "run", "system"),
		}, "call-run[p] call-chat1[a] call-run-2[r] call-task[task]"},
		{"calls side by side stay whole", []store.Turn{
			turn("p1", "one", "", "prompt"), turn("p2", "two", "", "prompt"), turn("r1", "one", "", "response"), turn("r2", "two", "", "response"),
		}, "call-one[p1 r1] call-two[p2 r2]"},
		{"a tool stays whole around its sub-agent", []store.Turn{
			turn("tc", "task", "run", "tool_call"), turn("a", "sub", "task", "response"), turn("tr", "task", "run", "tool_result"),
		}, "call-task[tc tr] call-sub[a]"},
		{"a cycle of parents ends", []store.Turn{
			turn("p", "x", "y", "prompt"), turn("q", "y", "x", "prompt"), turn("r", "x", "y", "response"),
		}, "call-x[p] call-y[q] call-x-2[r]"},
	} {
		var in, cards []string
		for _, t := range tc.turns {
			in = append(in, t.TurnID+"/"+t.SpanID+"<"+t.ParentSpanID)
		}
		for _, c := range buildCards(viewsOf(tc.turns), "") {
			var ids []string
			for _, tv := range c.Turns {
				ids = append(ids, tv.TurnID)
			}
			cards = append(cards, c.ID+"["+strings.Join(ids, " ")+"]")
			if want := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(c.ID, cardPrefix), "-2"), "-3"); c.CompareID() != want {
				t.Errorf("%s: card %s compares as %q, want its call %q", tc.name, c.ID, c.CompareID(), want)
			}
		}
		if got := strings.Join(cards, " "); got != tc.want {
			t.Errorf("%s: turns (id/span<parent) %v\n got %s\nwant %s", tc.name, in, got, tc.want)
		}
	}
}

// The timeline keeps calls in start order, a band per run of one phase
// and round: a revision between two review rounds shows between them.
func TestTimelineBands(t *testing.T) {
	turn := func(id, phase string, round uint16) store.Turn {
		return store.Turn{Turn: schema.Turn{TurnID: id, SpanID: id, Phase: phase, Round: round, Role: "prompt"}}
	}
	v := newThreadView(store.Thread{}, []store.Turn{turn("a", "plan", 0), turn("b", "review", 0), turn("c", "revision", 1),
		turn("d", "review", 1), turn("e", "review", 1), turn("f", "verify", 0)}, "")
	var bands []string
	for _, b := range v.Bands {
		bands = append(bands, fmt.Sprintf("%s/%d:%d", b.Key, b.Round, len(b.Calls)))
	}
	if got, want := strings.Join(bands, " "), "plan/0:1 review/0:1 revision/1:1 review/1:2 verify/0:1"; got != want {
		t.Errorf("bands %q, want %q", got, want)
	}
}

func viewsOf(turns []store.Turn) []turnView {
	b := newTurnBuilder(turns, "")
	views := make([]turnView, len(turns))
	for i, t := range turns {
		views[i] = b.view(t)
	}
	return views
}

// Leading messages the page showed before are history; the first one not
// seen and everything after it are new, and a prompt keeps at least one.
func TestTurnBuilderHistory(t *testing.T) {
	prompt := func(id, msgs string) store.Turn {
		return store.Turn{Turn: schema.Turn{TurnID: id, Role: "prompt", Content: msgs}}
	}
	tests := []struct {
		name  string
		turns []store.Turn
		want  string // of the last turn: earlier messages | shown roles
	}{
		{
			name:  "first prompt shows all",
			turns: []store.Turn{prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`)},
			want:  "0|system,user",
		},
		{
			name: "repeated history with the answer",
			turns: []store.Turn{
				prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`),
				{Turn: schema.Turn{TurnID: "b", Role: "response", Content: "answer\n"}},
				prompt("c", `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"answer"},{"role":"user","content":"more"}]`)},
			want: "3|user",
		},
		{
			name: "a changed message ends the history",
			turns: []store.Turn{
				prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`),
				prompt("c", `[{"role":"system","content":"s"},{"role":"user","content":"other"},{"role":"user","content":"u"}]`)},
			want: "1|user,user",
		},
		{
			name: "the same prompt again keeps its last message",
			turns: []store.Turn{
				prompt("a", `[{"role":"user","content":"u"}]`),
				prompt("c", `[{"role":"user","content":"u"}]`)},
			want: "0|user",
		},
	}
	roles := func(ms []messageView) string {
		var rs []string
		for _, m := range ms {
			rs = append(rs, m.Role)
		}
		return strings.Join(rs, ",")
	}
	for _, tt := range tests {
		b := newTurnBuilder(tt.turns, "")
		var last turnView
		for _, turn := range tt.turns {
			last = b.view(turn)
		}
		if got := fmt.Sprint(last.Earlier) + "|" + roles(last.Messages); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestTurnBuilderToolPairs(t *testing.T) {
	turns := []store.Turn{
		{Turn: schema.Turn{TurnID: "c1", Role: "tool_call", ToolCallID: "x", ToolName: "grep", Speaker: "w"}},
		{Turn: schema.Turn{TurnID: "r1", Role: "tool_result", ToolCallID: "x", ToolName: "grep", Speaker: "w"}},
		{Turn: schema.Turn{TurnID: "c2", Role: "tool_call", ToolCallID: "y", ToolName: "ls"}},
		{Turn: schema.Turn{TurnID: "r3", Role: "tool_result_error", ToolCallID: "z"}},
		{Turn: schema.Turn{TurnID: "c3", Role: "tool_call", ToolCallID: "z", ToolName: "rm"}}}
	b := newTurnBuilder(turns, "")
	want := []string{"result r1 w · tool_result · grep", "result of c1 w · tool_call · grep", "  ", "result of c3 tool_call · rm", "result r3 tool_result_error"}
	for i, turn := range turns {
		v := b.view(turn)
		if got := v.PairVerb + " " + v.PairID + " " + v.PairLabel; got != want[i] {
			t.Errorf("%s: pair %q, want %q", turn.TurnID, got, want[i])
		}
	}
}
