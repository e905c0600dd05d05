package viewer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/schema/genai"
)

func TestPhaseClass(t *testing.T) {
	tests := []struct{ phase, want string }{
		{"plan", "ph-0"}, {" Review ", "ph-1"}, {"EXECUTE", "ph-2"}, {"verify", "ph-3"}, {"revision", "ph-4"},
		{"critique", "ph-5"}, {"adjudicate", "ph-6"}, {"", "ph-none"}, {"  ", "ph-none"},
	}
	for _, tt := range tests {
		if got := phaseClass(tt.phase); got != tt.want {
			t.Errorf("phaseClass(%q) = %q, want %q", tt.phase, got, tt.want)
		}
	}
	// Other phases: one of the shared colours, the same for any spelling.
	shared := map[string]bool{"ph-7": true, "ph-8": true, "ph-9": true, "ph-10": true, "ph-11": true}
	for _, p := range []string{"triage", "deploy", "<script>", "설계", "x"} {
		if got := phaseClass(p); !shared[got] || phaseClass(strings.ToUpper(p)+" ") != got {
			t.Errorf("phaseClass(%q) = %q, want one of ph-7…ph-11 whatever the case", p, got)
		}
	}
}

func TestPhaseLegends(t *testing.T) {
	spans := []TraceSpan{{Phase: "triage"}, {Phase: ""}, {Phase: "Verify"}, {Phase: "plan"}, {Phase: "verify"}}
	var got []string
	for _, l := range phaseLegends(spans) {
		got = append(got, l.Name+"="+l.Class)
	}
	want := "Plan=ph-0 Verify=ph-3 triage=" + phaseClass("triage") + " No phase=ph-none"
	if strings.Join(got, " ") != want {
		t.Errorf("legend = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestPrettyJSON(t *testing.T) {
	tests := []struct {
		name, raw, text string
		blocks          []DetailBlock
	}{
		{"object indented, numbers as written", `{"b":1.50,"a":"x"}`, "{\n  \"a\": \"x\",\n  \"b\": 1.50\n}", nil},
		{"a string is its text", `"line 1\nline 2"`, "line 1\nline 2", nil},
		{"multi-line fields as blocks", `{"path":"a.go","patch":"--- a\n+++ b\n"}`,
			"{\n  \"patch\": \"--- a\\n+++ b\\n\",\n  \"path\": \"a.go\"\n}", []DetailBlock{{Key: "patch", Text: "--- a\n+++ b\n"}}},
		{"HTML kept as text", `{"q":"<b>"}`, "{\n  \"q\": \"<b>\"\n}", nil},
		{"not JSON as written", `{"cut`, `{"cut`, nil},
		{"null is nothing", `null`, "", nil},
	}
	for _, tt := range tests {
		text, blocks := prettyJSON(json.RawMessage(tt.raw))
		if text != tt.text || fmt.Sprint(blocks) != fmt.Sprint(tt.blocks) {
			t.Errorf("%s: prettyJSON(%s) = %q, %v; want %q, %v", tt.name, tt.raw, text, blocks, tt.text, tt.blocks)
		}
	}
}

func TestTurnBody(t *testing.T) {
	content := genai.Render([]genai.Message{
		{Role: "user", Parts: []genai.Part{genai.Text("fix it")}},
		{Role: "assistant", Parts: []genai.Part{genai.ToolCall("c1", "edit", `{"file":"a.go"}`)}},
		{Role: "tool", Parts: []genai.Part{genai.ToolResponse("c1", "done")}},
		{Role: "user", Parts: []genai.Part{genai.Text("now test")}},
	})
	history, msgs, text, _ := turnBody(content, 3)
	if len(history) != 3 || len(msgs) != 1 || text != "" {
		t.Fatalf("turnBody with 3 earlier: %d earlier, %d new, text %q; want 3, 1, none", len(history), len(msgs), text)
	}
	call := history[1].Parts[0]
	if call.Kind != partToolCall || call.Name != "edit" || call.ID != "c1" || call.Text != "{\n  \"file\": \"a.go\"\n}" {
		t.Errorf("tool call part = %+v, want edit c1 with indented arguments", call)
	}
	if res := history[2]; res.Role != "tool (c1)" || res.Parts[0].Kind != partToolResult || res.Parts[0].Text != "done" {
		t.Errorf("tool result message = %+v, want tool (c1) with its text", res)
	}
	if _, _, text, _ := turnBody(`{"cmd":"ls"}`, 0); text != "{\n  \"cmd\": \"ls\"\n}" {
		t.Errorf("JSON content shows as %q, want it indented", text)
	}
	if _, _, text, _ := turnBody("plain <text>", 0); text != "plain <text>" {
		t.Errorf("plain content shows as %q", text)
	}
}

// The waterfall marks the first token on a provider call's bar where the
// span knows it, and nowhere else.
func TestTraceViewTTFT(t *testing.T) {
	s := uint64(time.Second)
	tr := Trace{TraceID: "t", StartNS: 0, DurationNS: 10 * s, Spans: []TraceSpan{
		{SpanID: "a", StartNS: 2 * s, DurationNS: 4 * s, LLM: true, TTFTNS: s, Phase: "plan"},
		{SpanID: "b", StartNS: 0, DurationNS: 10 * s, LLM: true},
		{SpanID: "c", StartNS: 0, DurationNS: s, LLM: true, TTFTNS: 2 * s}, // after its end: not drawn
	}}
	v := newTraceView(tr)
	got := []string{v.Rows[0].TTFTX, v.Rows[1].TTFTX, v.Rows[2].TTFTX}
	if strings.Join(got, ",") != "30.000%,," {
		t.Errorf("first token marks at %q, want 30%% on a (2 s + 1 s of 10 s) and none on b, c", got)
	}
	if v.Rows[0].PhaseClass != "ph-0" || v.Rows[1].PhaseClass != "ph-none" || v.Rows[0].DetailURL != "/traces/t/spans/a/detail" {
		t.Errorf("rows: phase classes %q, %q, detail %q", v.Rows[0].PhaseClass, v.Rows[1].PhaseClass, v.Rows[0].DetailURL)
	}
}
