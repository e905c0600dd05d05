package demo

import (
	"context"
	"fmt"

	"github.com/convtrace/convtrace/instrument"
)

// run is the state of one Run.
type run struct {
	rec    *instrument.Recorder
	client *Client
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
