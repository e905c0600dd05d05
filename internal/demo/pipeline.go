package demo

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
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

// Option configures Run.
type Option interface{ apply(*config) }

type config struct {
	threadID    string
	httpClient  *http.Client
	maxAttempts int
	retryDelay  time.Duration
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithThreadID records the run on thread id instead of a new
// "demo-<random hex>" thread.
func WithThreadID(id string) Option { return optionFunc(func(c *config) { c.threadID = id }) }

// WithHTTPClient sends the provider requests with hc instead of
// http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *config) { c.httpClient = hc })
}

// WithMaxAttempts tries each provider call up to n times (default 3) while
// the provider answers with a retryable error such as 529 overloaded.
func WithMaxAttempts(n int) Option { return optionFunc(func(c *config) { c.maxAttempts = n }) }

func newConfig(opts []Option) (config, error) {
	c := config{maxAttempts: 3, retryDelay: 5 * time.Millisecond}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.maxAttempts < 1 {
		return c, fmt.Errorf("max attempts must be at least 1, got %d", c.maxAttempts)
	}
	return c, nil
}

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

// Run drives one demo pipeline run against the OpenAI-compatible API at
// baseURL (ending in /v1, e.g. Server.URL), recording every provider call
// and tool execution with rec on a new thread:
//
//   - plan: claude-planner and codex-planner write plans A and B in
//     parallel; claude-critic critiques plan B and codex-critic plan A, each
//     turn's parent being the plan it critiques; the adjudicator chooses a
//     plan, which becomes its parent;
//   - review: the reviewer reviews the chosen plan and requests changes;
//   - revision round 1: the chosen planner revises (phase revision) and the
//     reviewer approves (phase review), both with round 1;
//   - execute: the executor calls read_file, run_tests and apply_patch,
//     each recorded as a tool execution, then reports;
//   - verify: the verifier reports; the demo Provider refuses its first
//     attempt with 529 overloaded and Run retries.
//
// Run returns what it did so far along with the first error that stopped
// it. Recording never fails a call; only the provider's answers can.
func Run(ctx context.Context, rec *instrument.Recorder, baseURL string, opts ...Option) (Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Result{}, err
	}
	if rec == nil {
		return Result{}, errors.New("recorder must not be nil")
	}
	thread := cfg.threadID
	if thread == "" {
		thread = NewThreadID()
	}
	r := &run{
		rec:    rec,
		client: &Client{BaseURL: baseURL, HTTP: cfg.httpClient},
		cfg:    cfg,
		thread: thread,
		res:    Result{ThreadID: thread},
	}
	// One root span per run, so the trace waterfall shows the pipeline's
	// calls side by side and the executor's tool loop nested under it.
	err = rec.Step(instrument.WithThread(ctx, thread), "demo pipeline", r.pipeline)
	return r.res, err
}

// NewThreadID returns a new thread id, "demo-" and 16 random hex digits.
func NewThreadID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "demo-" + hex.EncodeToString(b)
}

// run is the state of one Run.
type run struct {
	rec    *instrument.Recorder
	client *Client
	cfg    config
	thread string
	res    Result
	ws     workspace
}

// outcome is the result of one provider call, retries included.
type outcome struct {
	calls  []Call
	msg    Message
	turnID string
	err    error
}

func (r *run) pipeline(ctx context.Context) error {
	task := Message{Role: "user", Content: issue}

	// Plan: two planners, two critics, one adjudicator.
	plans := both(ctx,
		func(ctx context.Context) outcome {
			return r.ask(ctx, step{agent: claudePlanner, phase: PhasePlan}, []Message{system(claudePlanner, PhasePlan, 0), task}, nil)
		},
		func(ctx context.Context) outcome {
			return r.ask(ctx, step{agent: codexPlanner, phase: PhasePlan}, []Message{system(codexPlanner, PhasePlan, 0), task}, nil)
		})
	if err := r.collect(PhasePlan, plans[:]...); err != nil {
		return err
	}
	planA, planB := plans[0], plans[1]
	critiques := both(ctx,
		func(ctx context.Context) outcome {
			return r.ask(ctx, step{agent: codexCritic, phase: PhasePlan, parent: planA.turnID}, []Message{
				system(codexCritic, PhasePlan, 0),
				user("Critique plan A (claude-planner).\n\n" + issue + "\n\nPlan A:\n" + planA.msg.Content),
			}, nil)
		},
		func(ctx context.Context) outcome {
			return r.ask(ctx, step{agent: claudeCritic, phase: PhasePlan, parent: planB.turnID}, []Message{
				system(claudeCritic, PhasePlan, 0),
				user("Critique plan B (codex-planner).\n\n" + issue + "\n\nPlan B:\n" + planB.msg.Content),
			}, nil)
		})
	if err := r.collect(PhasePlan, critiques[:]...); err != nil {
		return err
	}
	// The adjudicator's parent is the plan it chooses, known once it
	// has answered.
	chosen := -1
	decision := r.ask(ctx, step{agent: adjudicator, phase: PhasePlan, parentOf: func(m Message) string {
		chosen = choice(m.Content)
		if chosen < 0 {
			return ""
		}
		return plans[chosen].turnID
	}}, []Message{
		system(adjudicator, PhasePlan, 0),
		user(issue +
			"\n\nPlan A (claude-planner):\n" + planA.msg.Content +
			"\n\nPlan B (codex-planner):\n" + planB.msg.Content +
			"\n\nCritique of plan A (codex-critic):\n" + critiques[0].msg.Content +
			"\n\nCritique of plan B (claude-critic):\n" + critiques[1].msg.Content),
	}, nil)
	if err := r.collect(PhasePlan, decision); err != nil {
		return err
	}
	if chosen < 0 {
		return fmt.Errorf("plan: the adjudicator chose no plan: %.80q", decision.msg.Content)
	}
	r.res.Chosen = string(rune('A' + chosen))
	planner := []agent{claudePlanner, codexPlanner}[chosen]
	plan := plans[chosen]

	// Review, then revision rounds until the reviewer approves.
	review := r.ask(ctx, step{agent: reviewer, phase: PhaseReview, parent: plan.turnID}, []Message{
		system(reviewer, PhaseReview, 0),
		user("Review plan " + r.res.Chosen + " for this issue.\n\n" + issue + "\n\nPlan:\n" + plan.msg.Content),
	}, nil)
	if err := r.collect(PhaseReview, review); err != nil {
		return err
	}
	for round := 1; !approved(review.msg.Content); round++ {
		if round > maxRevisionRounds {
			return fmt.Errorf("review: plan not approved after %d revision rounds", maxRevisionRounds)
		}
		revised := r.ask(ctx, step{agent: planner, phase: PhaseRevision, round: round, parent: review.turnID}, []Message{
			system(planner, PhaseRevision, round),
			task,
			{Role: "assistant", Content: plan.msg.Content},
			user("The reviewer requested changes:\n\n" + review.msg.Content + "\n\nRevise the plan."),
		}, nil)
		if err := r.collect(PhaseRevision, revised); err != nil {
			return err
		}
		plan = revised
		review = r.ask(ctx, step{agent: reviewer, phase: PhaseReview, round: round, parent: plan.turnID}, []Message{
			system(reviewer, PhaseReview, round),
			user(fmt.Sprintf("Review revision %d of plan %s.\n\nYour previous review:\n%s\n\nRevised plan:\n%s", round, r.res.Chosen, review.msg.Content, plan.msg.Content)),
		}, nil)
		if err := r.collect(PhaseReview, review); err != nil {
			return err
		}
	}

	var report outcome
	var tests string
	err := r.rec.Step(instrument.WithPhase(ctx, PhaseExecute), "execute plan", func(ctx context.Context) error {
		var err error
		report, tests, err = r.execute(ctx, plan)
		return err
	})
	if err != nil {
		return err
	}

	verdict := r.ask(ctx, step{agent: verifier, phase: PhaseVerify, parent: report.turnID}, []Message{
		system(verifier, PhaseVerify, 0),
		user("Verify the change.\n\nApproved plan:\n" + plan.msg.Content +
			"\n\nExecutor's report:\n" + report.msg.Content +
			"\n\nLast test run:\n" + tests),
	}, nil)
	return r.collect(PhaseVerify, verdict)
}

// execute runs the executor's tool loop until it answers without tool
// calls. It returns that answer and the output of the last test run.
func (r *run) execute(ctx context.Context, plan outcome) (outcome, string, error) {
	st := step{agent: executor, phase: PhaseExecute, parent: plan.turnID}
	msgs := []Message{
		system(executor, PhaseExecute, 0),
		user("Carry out this approved plan.\n\n" + issue + "\n\nPlan:\n" + plan.msg.Content),
	}
	var tests string
	for range maxExecutorTurns {
		o := r.ask(ctx, st, msgs, executorTools)
		if err := r.collect(PhaseExecute, o); err != nil {
			return o, tests, err
		}
		if len(o.msg.ToolCalls) == 0 {
			return o, tests, nil
		}
		st.parent = o.turnID
		msgs = append(msgs, o.msg)
		for _, tc := range o.msg.ToolCalls {
			name, args := tc.Function.Name, tc.Function.Arguments
			out, err := r.rec.Tool(st.context(ctx), instrument.ToolCall{Name: name, CallID: tc.ID, Arguments: args},
				func(ctx context.Context) (string, error) { return r.ws.run(ctx, name, args) })
			if err != nil {
				out = "error: " + err.Error()
			}
			if name == "run_tests" {
				tests = out
			}
			r.res.Tools = append(r.res.Tools, ToolRun{Name: name, CallID: tc.ID, Arguments: args, Output: out, Err: err})
			msgs = append(msgs, Message{Role: "tool", ToolCallID: tc.ID, Content: out})
		}
	}
	return outcome{}, tests, fmt.Errorf("execute: no final answer after %d turns", maxExecutorTurns)
}

// step is one provider call of the pipeline.
type step struct {
	agent
	phase  string
	round  int
	parent string
	// parentOf, when set, picks the parent turn from the reply.
	parentOf func(Message) string
}

func (st step) context(ctx context.Context) context.Context {
	ctx = instrument.WithSpeaker(instrument.WithPhase(ctx, st.phase), st.speaker)
	if st.round > 0 {
		ctx = instrument.WithRound(ctx, st.round)
	}
	return ctx
}

// ask makes one provider call through rec, retrying while the provider
// answers with a retryable error. Every attempt is its own recorded call.
func (r *run) ask(ctx context.Context, st step, msgs []Message, tools []Tool) outcome {
	ctx = st.context(ctx)
	prompt := marshal(msgs)
	var o outcome
	for attempt := 1; ; attempt++ {
		call := Call{
			Phase: st.phase, Speaker: st.speaker, Round: st.round, Provider: st.provider, Model: st.model,
			Attempt: attempt, ParentTurnID: st.parent,
		}
		var msg Message
		resp, err := r.rec.Call(ctx, instrument.Turn{Provider: st.provider, Model: st.model, Prompt: prompt, ParentTurnID: st.parent},
			func(ctx context.Context) (instrument.Response, error) {
				chat, err := r.client.Chat(ctx, ChatRequest{Model: st.model, Messages: msgs, Tools: tools, User: r.thread})
				if err != nil {
					return instrument.Response{}, err
				}
				msg = chat.Choices[0].Message
				resp := response(chat)
				if st.parentOf != nil {
					resp.ParentTurnID = st.parentOf(msg)
					call.ParentTurnID = cmp.Or(resp.ParentTurnID, call.ParentTurnID)
				}
				return resp, nil
			})
		call.TurnID, call.Err = resp.TurnID, err
		if err == nil {
			call.ResponseModel, call.Content, call.ToolCalls = resp.Model, resp.Content, msg.ToolCalls
			call.Usage, call.CostUSD = resp.Usage, resp.CostUSD
		}
		o.calls = append(o.calls, call)
		o.msg, o.turnID, o.err = msg, resp.TurnID, err
		var apiErr *APIError
		if err == nil || !errors.As(err, &apiErr) || !apiErr.Retryable() || attempt == r.cfg.maxAttempts {
			return o
		}
		if err := sleep(ctx, time.Duration(attempt)*r.cfg.retryDelay); err != nil {
			o.err = err
			return o
		}
	}
}

// both runs a and b in parallel.
func both(ctx context.Context, a, b func(context.Context) outcome) [2]outcome {
	var out [2]outcome
	var wg sync.WaitGroup
	wg.Go(func() { out[0] = a(ctx) })
	wg.Go(func() { out[1] = b(ctx) })
	wg.Wait()
	return out
}

// collect adds the outcomes' calls to the result and returns their errors.
func (r *run) collect(phase string, os ...outcome) error {
	var errs []error
	for _, o := range os {
		r.res.Calls = append(r.res.Calls, o.calls...)
		if o.err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", phase, o.calls[len(o.calls)-1].Speaker, o.err))
		}
	}
	return errors.Join(errs...)
}

// response maps a chat completion to what rec records. A reply that calls
// tools is recorded as its message JSON, so the turn shows the calls.
func response(chat ChatResponse) instrument.Response {
	msg := chat.Choices[0].Message
	resp := instrument.Response{Content: msg.Content, Model: chat.Model}
	if len(msg.ToolCalls) > 0 {
		resp.Content = marshal(msg)
	}
	if u := chat.Usage; u != nil {
		resp.Usage = &instrument.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		if d := u.PromptTokensDetails; d != nil {
			resp.Usage.CacheReadTokens = d.CachedTokens
		}
		if d := u.CompletionTokensDetails; d != nil {
			resp.Usage.ReasoningTokens = d.ReasoningTokens
		}
		resp.CostUSD = u.Cost
	}
	return resp
}

func system(a agent, phase string, round int) Message {
	s := fmt.Sprintf("You are %s, %s\nPhase: %s.", a.speaker, a.role, phase)
	if round > 0 {
		s += fmt.Sprintf("\nRound: %d.", round)
	}
	return Message{Role: "system", Content: s}
}

func user(s string) Message { return Message{Role: "user", Content: s} }

var decisionRe = regexp.MustCompile(`(?i)\bdecision:\s*plan\s+([AB])\b`)

// choice returns the plan an adjudication chooses: 0 for A, 1 for B, -1
// for none.
func choice(s string) int {
	m := decisionRe.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	return int(strings.ToUpper(m[1])[0] - 'A')
}

// approved reports whether a review's verdict, its first line, approves.
func approved(review string) bool {
	first, _, _ := strings.Cut(strings.ToLower(review), "\n")
	return strings.Contains(first, "approved") && !strings.Contains(first, "changes requested")
}

// marshal returns v as JSON without HTML escaping, so prompts read as sent.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
