package demo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/convtrace/convtrace/instrument"
)

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
		if err == nil || !errors.As(err, &apiErr) || !apiErr.Retryable() || attempt == maxAttempts {
			return o
		}
		if err := sleep(ctx, time.Duration(attempt)*retryDelay); err != nil {
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
