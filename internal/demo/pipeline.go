package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/convtrace/convtrace/instrument"
)

// Phases of the demo pipeline. The dual-plan turns (planners, critics and
// adjudicator) all belong to PhasePlan. A revision round puts the planner's
// revised plan in PhaseRevision and the reviewer's second look in
// PhaseReview, both with the round's number.
const (
	PhasePlan     = "plan"
	PhaseReview   = "review"
	PhaseRevision = "revision"
	PhaseExecute  = "execute"
	PhaseVerify   = "verify"
)

// agent is one speaker of the pipeline and the provider and model it calls.
type agent struct {
	speaker, provider, model string
	role                     string // what the system message asks of it
}

var (
	claudePlanner = agent{"claude-planner", "anthropic", "claude-sonnet-4-5",
		"a planner in a coding-agent pipeline. Read the issue and write a short numbered plan."}
	codexPlanner = agent{"codex-planner", "openai", "gpt-5-codex",
		"a planner in a coding-agent pipeline. Read the issue and write a short numbered plan."}
	claudeCritic = agent{"claude-critic", "openrouter", "anthropic/claude-opus-4.1",
		"a critic in a coding-agent pipeline. Find the weaknesses of the other planner's plan."}
	codexCritic = agent{"codex-critic", "openrouter", "openai/gpt-5",
		"a critic in a coding-agent pipeline. Find the weaknesses of the other planner's plan."}
	adjudicator = agent{"adjudicator", "openrouter", "google/gemini-2.5-pro",
		`the adjudicator of a coding-agent pipeline. Read both plans and both critiques, then start with "Decision: plan A" or "Decision: plan B" and say why.`}
	reviewer = agent{"reviewer", "ollama", "qwen2.5-coder:32b",
		`the reviewer of a coding-agent pipeline. You do not see the repository. Answer "approved" or "changes requested", then numbered findings.`}
	executor = agent{"codex-executor", "openai", "gpt-5-codex",
		"the executor of a coding-agent pipeline. Carry out the approved plan with the tools, then report what changed."}
	verifier = agent{"claude-verifier", "anthropic", "claude-sonnet-4-5",
		"the verifier of a coding-agent pipeline. Check the change against the approved plan and report."}
)

const issue = `Issue #418: TypeError in parseConfig when the config file is empty 🐛

Repro: ` + "`touch .shipcode.yml && shipcode run`" + `

TypeError: Cannot read properties of undefined (reading 'settings')
    at parseConfig (src/config.ts:14:38)

test/config.test.ts > "returns defaults when the config file is empty" fails on main.`

const (
	maxRevisionRounds = 3
	maxExecutorTurns  = 8
)

// A provider call is tried up to maxAttempts times while the provider
// answers with a retryable error such as 529 overloaded, retryDelay more
// after each attempt.
const (
	maxAttempts = 3
	retryDelay  = 5 * time.Millisecond
)

// Result is what one run did.
type Result struct {
	ThreadID string
	Chosen   string    // the plan the adjudicator chose: "A" (claude-planner) or "B" (codex-planner)
	Calls    []Call    // every provider call attempt, in pipeline order
	Tools    []ToolRun // every tool execution, in order
}

// Call is one provider call attempt as the pipeline recorded it.
type Call struct {
	Phase, Speaker  string
	Round           int
	Provider, Model string // as requested
	Attempt         int    // 1 for the first try
	ParentTurnID    string
	TurnID          string // the response turn, or the error turn when Err is set

	ResponseModel string
	Content       string     // the response turn's content
	ToolCalls     []ToolCall // what the model asked to run
	Usage         *instrument.Usage
	CostUSD       *float64 // nil when the provider reported no cost
	Err           error
}

// ToolRun is one tool execution of the executor.
type ToolRun struct {
	Name, CallID, Arguments string
	Output                  string // the result, or "error: ..." when the tool failed
	Err                     error
}

// Run drives one demo pipeline run (the script: docs/design/demo.md)
// against the OpenAI-compatible API at baseURL (ending in /v1, e.g.
// Server.URL), recording every call and tool execution with rec on a new
// thread. It returns what it did so far with the first error that stopped
// it; recording never fails a call, only the provider's answers can.
func Run(ctx context.Context, rec *instrument.Recorder, baseURL string) (Result, error) {
	if rec == nil {
		return Result{}, errors.New("recorder must not be nil")
	}
	thread := NewThreadID()
	r := &run{
		rec:    rec,
		client: &Client{BaseURL: baseURL},
		thread: thread,
		res:    Result{ThreadID: thread},
	}
	// One root span per run, so the trace waterfall shows the pipeline's
	// calls side by side and the executor's tool loop nested under it.
	err := rec.Step(instrument.WithThread(ctx, thread), "demo pipeline", r.pipeline)
	return r.res, err
}

// NewThreadID returns a new thread id, "demo-" and 16 random hex digits.
func NewThreadID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "demo-" + hex.EncodeToString(b)
}
