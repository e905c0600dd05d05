package viewer

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

func TestTurnMarkdown(t *testing.T) {
	tests := []struct {
		name string
		turn store.Turn
		want string
	}{
		{
			name: "plain response",
			turn: store.Turn{Turn: schema.Turn{Speaker: "planner", Phase: "plan", Role: "response", Model: "gpt-5", Content: "step 1\nstep 2\n"}},
			want: "### planner · Plan · response (gpt-5)\n\n```\nstep 1\nstep 2\n```\n\n",
		},
		{
			name: "round, other phase, agent when no speaker",
			turn: store.Turn{Turn: schema.Turn{Agent: "sub", Phase: "Deploy", Round: 2, Role: "prompt", Content: "go"}},
			want: "### sub · Deploy (round 2) · prompt\n\n```\ngo\n```\n\n",
		},
		{
			name: "backticks in content get a longer fence",
			turn: store.Turn{Turn: schema.Turn{Speaker: "coder", Phase: "execute", Role: "response", Content: "```go\nx := 1\n```\nand ````"}},
			want: "### coder · Execute · response\n\n`````\n```go\nx := 1\n```\nand ````\n`````\n\n",
		},
		{
			name: "chat messages one fence each",
			turn: store.Turn{Turn: schema.Turn{Speaker: "reviewer", Phase: "review", Role: "prompt", Content: `[{"role":"system","content":"be strict"},{"role":"user","content":"review <b>"}]`}},
			want: "### reviewer · Review · prompt\n\n**system**\n\n```\nbe strict\n```\n\n**user**\n\n```\nreview <b>\n```\n\n",
		},
		{
			name: "error whose content is its message",
			turn: store.Turn{Turn: schema.Turn{Speaker: "verifier", Phase: "verify", Role: "error", Status: "error", Error: "rate limited:\n429", Content: "rate limited:\n429"}},
			want: "### verifier · Verify · error\n\n> Error: rate limited: 429\n\n",
		},
		{
			name: "nobody, no phase, no content",
			turn: store.Turn{Turn: schema.Turn{Role: "prompt"}},
			want: "### — · prompt\n\n",
		},
		{
			name: "heading on one line",
			turn: store.Turn{Turn: schema.Turn{Speaker: "a\nb", Role: "response", Content: "x"}},
			want: "### a b · response\n\n```\nx\n```\n\n",
		},
	}
	for _, tt := range tests {
		if got := turnMarkdown(tt.turn); got != tt.want {
			t.Errorf("%s: turnMarkdown(%+v)\n got %q\nwant %q", tt.name, tt.turn, got, tt.want)
		}
	}
}

func TestThreadMarkdown(t *testing.T) {
	turns := []store.Turn{
		{Turn: schema.Turn{Speaker: "planner", Phase: "plan", Role: "prompt", Content: "plan it"}},
		{Turn: schema.Turn{Speaker: "planner", Phase: "plan", Role: "response", Content: "the plan"}}}
	got := threadMarkdown(store.Thread{Title: "Ship\nit"}, turns)
	want := "# Ship it\n\n### planner · Plan · prompt\n\n```\nplan it\n```\n\n### planner · Plan · response\n\n```\nthe plan\n```\n\n"
	if got != want {
		t.Errorf("threadMarkdown\n got %q\nwant %q", got, want)
	}
	if got := threadMarkdown(store.Thread{Title: "empty"}, nil); got != "# empty\n" {
		t.Errorf("threadMarkdown of no turns = %q, want the title only", got)
	}
}

func TestFenced(t *testing.T) {
	for _, tt := range []struct{ in, fence string }{
		{"", "```"}, {"a`b", "```"}, {"``", "```"}, {"```", "````"}, {strings.Repeat("`", 7) + "x", strings.Repeat("`", 8)},
	} {
		want := tt.fence + "\n" + tt.in + "\n" + tt.fence + "\n"
		if got := fenced(tt.in); got != want {
			t.Errorf("fenced(%q) = %q, want %q", tt.in, got, want)
		}
	}
}
