package viewer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer/query"
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
	turn := func(id, phase string, round uint16) query.Turn {
		return query.Turn{Turn: schema.Turn{TurnID: id, Phase: phase, Round: round, Role: "prompt"}}
	}
	tests := []struct {
		name  string
		turns []query.Turn
		want  string // phases as Name[round:ids…]…
	}{
		{
			name:  "canonical order, case-insensitive",
			turns: []query.Turn{turn("a", "Verify", 0), turn("b", "PLAN", 0), turn("c", "plan", 0), turn("d", "Review", 0)},
			want:  "Plan[0:b,c] Review[0:d] Verify[0:a]",
		},
		{
			name:  "others follow by first appearance, empty phase included",
			turns: []query.Turn{turn("a", "deploy", 0), turn("b", "", 0), turn("c", "Adjudicate", 0), turn("d", "Cleanup", 0), turn("e", "deploy", 0)},
			want:  "Adjudicate[0:c] deploy[0:a,e] No phase[0:b] Cleanup[0:d]",
		},
		{
			name:  "rounds ascending, turns in order inside",
			turns: []query.Turn{turn("a", "revision", 2), turn("b", "revision", 1), turn("c", "revision", 2), turn("d", "revision", 10)},
			want:  "Revision[1:b][2:a,c][10:d]",
		},
		{name: "no turns", want: ""},
	}
	for _, tt := range tests {
		v := newThreadView(query.Thread{}, tt.turns, "")
		var parts []string
		for _, p := range v.Phases {
			s := p.Name
			for _, r := range p.Rounds {
				var ids []string
				for _, tv := range r.Turns {
					ids = append(ids, tv.TurnID)
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

func TestTurnView(t *testing.T) {
	parent := query.Turn{Turn: schema.Turn{TurnID: "p", Speaker: "planner", Phase: "plan", Role: "response"}}
	tests := []struct {
		name string
		turn query.Turn
		want turnView
	}{
		{
			name: "critique of a turn on the page",
			turn: query.Turn{Turn: schema.Turn{TurnID: "c", Phase: "Critique", ParentTurnID: "p", Content: "a\nb\n"}},
			want: turnView{Lines: 2, ParentVerb: "critiques", ParentLabel: "planner · plan · response"},
		},
		{
			name: "reply to a turn elsewhere",
			turn: query.Turn{Turn: schema.Turn{TurnID: "x", Phase: "execute", ParentTurnID: "elsewhere", Content: strings.Repeat("l\n", 31)}},
			want: turnView{Lines: 31, Collapsed: true, ParentVerb: "replies to"},
		},
		{
			name: "failed by status",
			turn: query.Turn{Turn: schema.Turn{TurnID: "e", Role: "response", Status: "error", Error: "boom", Content: "boom"}},
			want: turnView{Lines: 1, Failed: true},
		},
	}
	for _, tt := range tests {
		got := newTurnBuilder([]query.Turn{parent}, "").view(tt.turn)
		tt.want.Turn = tt.turn
		tt.want.SpeakerSegs = []Segment{{Text: tt.turn.Speaker}}
		tt.want.Text = []Segment{{Text: tt.turn.Content}}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	if (turnView{Turn: query.Turn{Turn: schema.Turn{Content: "boom", Error: "boom"}}, Failed: true}).ShowContent() {
		t.Error("an error turn whose content is its message shows the message twice")
	}
}

// Leading messages the page showed before are history; the first one not
// seen and everything after it are new, and a prompt keeps at least one.
func TestTurnBuilderHistory(t *testing.T) {
	prompt := func(id, msgs string) query.Turn {
		return query.Turn{Turn: schema.Turn{TurnID: id, Role: "prompt", Content: msgs}}
	}
	tests := []struct {
		name  string
		turns []query.Turn
		want  string // of the last turn: earlier roles | shown roles
	}{
		{
			name:  "first prompt shows all",
			turns: []query.Turn{prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`)},
			want:  "|system,user",
		},
		{
			name: "repeated history with the answer",
			turns: []query.Turn{
				prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`),
				{Turn: schema.Turn{TurnID: "b", Role: "response", Content: "answer\n"}},
				prompt("c", `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"answer"},{"role":"user","content":"more"}]`)},
			want: "system,user,assistant|user",
		},
		{
			name: "a changed message ends the history",
			turns: []query.Turn{
				prompt("a", `[{"role":"system","content":"s"},{"role":"user","content":"u"}]`),
				prompt("c", `[{"role":"system","content":"s"},{"role":"user","content":"other"},{"role":"user","content":"u"}]`)},
			want: "system|user,user",
		},
		{
			name: "the same prompt again keeps its last message",
			turns: []query.Turn{
				prompt("a", `[{"role":"user","content":"u"}]`),
				prompt("c", `[{"role":"user","content":"u"}]`)},
			want: "|user",
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
		if got := roles(last.Earlier) + "|" + roles(last.Messages); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestTurnBuilderToolPairs(t *testing.T) {
	turns := []query.Turn{
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
