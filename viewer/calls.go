package viewer

import (
	"strconv"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Kinds of card.
const (
	callLLM  = "llm"  // a provider call: its prompt and its answer
	callTool = "tool" // a tool run: its call and its result
	callNote = "note" // a turn of any other role: system, reasoning, a warning
	// callReset is a context reset: a divider, after which the recent
	// context starts anew.
	callReset = "reset"
)

// callView is one card of the thread page: the turns of one span (a
// provider call's prompt and answer, a tool's call and result), or one
// turn of another kind, shown compactly. Its header sums up the call.
type callView struct {
	ID    string // the card's element id
	Kind  string
	Turns []turnView // in the order said

	// Of the call as a whole, from its turns.
	Speaker, Agent, Phase, PhaseKey, Model, Provider, Tool string
	SpeakerSegs                                            []Segment
	Round                                                  uint16
	StartNS, DurationNS, TTFTNS                            uint64
	TokensIn, TokensOut, TokensCacheRead                   *uint32
	CostUSD                                                *float64
	Running, Interrupted, Failed                           bool
	// Retried says the call failed and was retried (store.Retried): a
	// later call of the same phase, round, speaker, agent and tool ended
	// well.
	Retried bool

	// The call this one answers (a review, a critique, a revision): its
	// card's id when it is on the page, and its label.
	ParentVerb, ParentLabel, ParentTurn, ParentCall string

	TraceURL, DetailURL string
	nested              bool   // shown under the answer that asked for it
	call                string // callID of its turns
}

// CompareID is the call's id on the compare page: its span, else its
// turn (callID).
func (c *callView) CompareID() string { return c.call }

// cardPrefix starts the element id of every card.
const cardPrefix = "call-"

// cardID is the element id of the card of the call t belongs to.
func cardID(t store.Turn) string { return cardPrefix + callID(t) }

// buildCards gathers turn views, in the order said, into cards in the
// order their calls started, then nests each tool run under the answer
// that asked for it. A call whose own calls (an agent run's provider
// calls and tools) started a card after its card's last turn goes on in a
// card of its own after them: so an agent's answer follows the calls that
// made it.
func buildCards(views []turnView, q string) []*callView {
	var (
		calls  []*callView
		byKey  = map[string]*callView{} // the last card of each call
		byTurn = map[string]*callView{}
		byTool = map[string]*callView{} // tool runs by tool_call_id
		parent = map[string]string{}    // span → parent span
		passed = map[string]bool{}      // cards one of their call's own calls came after
		parts  = map[string]int{}       // cards of each call so far
	)
	for _, tv := range views {
		if tv.SpanID != "" && tv.ParentSpanID != "" {
			parent[tv.SpanID] = tv.ParentSpanID
		}
	}
	for _, tv := range views {
		key := cardID(tv.Turn)
		c, ok := byKey[key]
		if !ok || passed[key] && c.Kind != callTool { // a tool run stays whole, nested where it was asked for
			c = &callView{ID: key, Kind: callNote, call: callID(tv.Turn)}
			if parts[key]++; parts[key] > 1 {
				c.ID += "-" + strconv.Itoa(parts[key])
			}
			byKey[key], passed[key] = c, false
			calls = append(calls, c)
			// Bounded: a cycle of parents in bad data ends.
			for span, n := tv.ParentSpanID, 0; span != "" && n <= len(parent); span, n = parent[span], n+1 {
				passed[cardPrefix+span] = true
			}
		}
		c.add(tv, q)
		byTurn[tv.TurnID] = c
		if c.Kind == callTool && tv.ToolCallID != "" {
			byTool[tv.ToolCallID] = c
		}
	}
	for _, c := range calls {
		c.link(byTurn)
		if c.Kind != callLLM {
			continue
		}
		for i := range c.Turns {
			for j := range c.Turns[i].Messages {
				for k := range c.Turns[i].Messages[j].Calls {
					tc := &c.Turns[i].Messages[j].Calls[k]
					if run := byTool[tc.ID]; run != nil && !run.nested {
						run.nested, tc.Run = true, run
					}
				}
			}
		}
	}
	markRetried(calls)
	top := calls[:0]
	for _, c := range calls {
		if !c.nested {
			top = append(top, c)
		}
	}
	return top
}

// markRetried marks the failed calls that were retried, by store.Retried.
func markRetried(calls []*callView) {
	var (
		outcomes []store.CallOutcome
		of       []*callView
	)
	for _, c := range calls {
		if c.Kind != callLLM && c.Kind != callTool {
			continue
		}
		o := store.CallOutcome{Phase: c.Phase, Round: c.Round, Speaker: c.Speaker, Agent: c.Agent, StartNS: c.StartNS, Failed: c.Failed}
		if c.Kind == callTool {
			o.Tool = c.Tool
		}
		for _, tv := range c.Turns {
			switch tv.Role {
			case schema.RoleResponse, schema.RoleError, schema.RoleToolResult, schema.RoleToolResultError:
				o.Ended = !c.Running && !c.Interrupted
			}
		}
		outcomes, of = append(outcomes, o), append(of, c)
	}
	for i, r := range store.Retried(outcomes) {
		of[i].Retried = r
	}
}

// eachCall calls fn on every call of cards, the tool runs nested under
// an answer included.
func eachCall(cards []*callView, fn func(*callView)) {
	for _, c := range cards {
		fn(c)
		for i := range c.Turns {
			for j := range c.Turns[i].Messages {
				for k := range c.Turns[i].Messages[j].Calls {
					if run := c.Turns[i].Messages[j].Calls[k].Run; run != nil {
						eachCall([]*callView{run}, fn)
					}
				}
			}
		}
	}
}

// add puts tv into the call and folds it into the call's header.
func (c *callView) add(tv turnView, q string) {
	t := tv.Turn
	first := len(c.Turns) == 0
	c.Turns = append(c.Turns, tv)
	switch t.Role {
	case schema.RolePrompt, schema.RoleResponse, schema.RoleError:
		c.Kind = callLLM
	case schema.RoleToolCall, schema.RoleToolResult, schema.RoleToolResultError:
		if c.Kind == callNote {
			c.Kind = callTool
		}
	case schema.RoleContextReset:
		c.Kind = callReset
	}
	if first {
		c.Speaker, c.Agent, c.Phase, c.PhaseKey, c.Round = t.Speaker, t.Agent, t.Phase, page.PhaseKey(t.Phase), t.Round
		c.SpeakerSegs = highlight(speakerOf(t.Turn), q)
		c.StartNS = t.StartNS
		if t.TraceID != "" && t.SpanID != "" {
			c.TraceURL, c.DetailURL = spanPageURL(t.TraceID, t.SpanID), detailURL(t.TraceID, t.SpanID)
		}
	}
	c.Model = firstOf(t.Model, c.Model) // the answer names the model that answered
	c.Provider = firstOf(c.Provider, t.Provider)
	c.Tool = firstOf(c.Tool, t.ToolName)
	c.DurationNS, c.TTFTNS = max(c.DurationNS, t.DurationNS), max(c.TTFTNS, t.TTFTNS)
	c.TokensIn = addCount(c.TokensIn, t.TokensIn)
	c.TokensOut = addCount(c.TokensOut, t.TokensOut)
	c.TokensCacheRead = addCount(c.TokensCacheRead, t.TokensCacheRead)
	if t.CostUSD != nil {
		c.CostUSD = new(*t.CostUSD + deref(c.CostUSD))
	}
	c.Running = c.Running || t.Running
	c.Interrupted = c.Interrupted || t.Interrupted
	c.Failed = c.Failed || tv.Failed
	if c.ParentTurn == "" && t.ParentTurnID != "" {
		c.ParentTurn = t.ParentTurnID
	}
}

// link names the call this one answers, and finds its card.
func (c *callView) link(byTurn map[string]*callView) {
	if c.ParentTurn == "" {
		return
	}
	c.ParentVerb = answerVerb(c.Phase)
	if p, ok := byTurn[c.ParentTurn]; ok {
		c.ParentCall = p.ID
		for i := range p.Turns {
			if p.Turns[i].TurnID == c.ParentTurn {
				c.ParentLabel = turnLabel(&p.Turns[i].Turn)
			}
		}
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// addCount adds b to a, either unknown (nil) counting as nothing, and
// both unknown staying unknown.
func addCount(a, b *uint32) *uint32 {
	if b == nil {
		return a
	}
	return new(*b + deref(a))
}

func deref[T uint32 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}
