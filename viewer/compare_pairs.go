package viewer

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer/query"
)

// call is one provider call or tool execution of a thread: the turns of
// one span, in the order said. A turn without a span is a call alone.
type call struct {
	ID    string // the span's id, or the lone turn's
	Turns []query.Turn
}

// callID is the id of the call t belongs to.
func callID(t query.Turn) string {
	if t.SpanID != "" {
		return t.SpanID
	}
	return t.TurnID
}

// groupCalls gathers turns, in the order said, into calls, in the order
// they started. Spans with no prompt, answer or tool row (a system
// message alone) are no call.
func groupCalls(turns []query.Turn) []call {
	var (
		calls []call
		at    = map[string]int{}
	)
	for _, t := range turns {
		id := callID(t)
		i, ok := at[id]
		if !ok {
			i = len(calls)
			at[id] = i
			calls = append(calls, call{ID: id})
		}
		calls[i].Turns = append(calls[i].Turns, t)
	}
	return slices.DeleteFunc(calls, func(c call) bool { return c.head() == nil })
}

// head is the turn that names the call: its prompt, tool call, or else
// its first answer; nil when it has none.
func (c call) head() *query.Turn {
	for _, roles := range [][]string{{schema.RolePrompt, schema.RoleToolCall}, answerRoles} {
		for i := range c.Turns {
			if slices.Contains(roles, c.Turns[i].Role) {
				return &c.Turns[i]
			}
		}
	}
	return nil
}

// answerRoles are the roles of the turns that answer a call.
var answerRoles = []string{schema.RoleResponse, schema.RoleError, schema.RoleToolResult, schema.RoleToolResultError}

// tool is the tool a call executes, "" for a provider call.
func (c call) tool() string {
	switch h := c.head(); h.Role {
	case schema.RoleToolCall, schema.RoleToolResult, schema.RoleToolResultError:
		if h.ToolName == "" {
			return "tool"
		}
		return h.ToolName
	}
	return ""
}

// who names the call's speaker: the speaker, else the agent, else the
// model.
func (c call) who() string {
	h := c.head()
	for _, s := range []string{h.Speaker, h.Agent, h.Model} {
		if s != "" {
			return s
		}
	}
	return "unnamed"
}

// where is the call's phase and round, "plan r0".
func (c call) where() string {
	h := c.head()
	if h.Phase == "" {
		return "r" + strconv.Itoa(int(h.Round))
	}
	return h.Phase + " r" + strconv.Itoa(int(h.Round))
}

// label names the call in a list to pick from: speaker · phase · round
// (· tool) · time.
func (c call) label() string {
	s := c.who() + " · " + c.where()
	if tool := c.tool(); tool != "" {
		s += " · " + tool
	}
	return s + " · " + time.Unix(0, int64(c.head().StartNS)).UTC().Format("15:04:05")
}

// pairLink is a natural partner of a call to compare it with.
type pairLink struct {
	// Kind is why it is a partner: "round" (the same speaker in the
	// previous or next round), "speaker" (another speaker in the same
	// phase and round), "sequence" (the same speaker's previous or next
	// call of the phase and round, or run of the tool).
	Kind  string `json:"kind"`
	Label string `json:"label"` // "vs codex-planner, plan r0", "vs round 0"
	Call  string `json:"call"`  // the partner's call id
	URL   string `json:"url"`   // the compare page of the two
}

// maxSpeakerPairs bounds the other speakers a call is paired with.
const maxSpeakerPairs = 8

// comparePairs returns the natural partners of each call of turns (a
// thread's, in the order said), keyed by the call's id and by the id of
// each of its turns:
//   - the same speaker's call in the previous and the next round, of the
//     same phase when there is one;
//   - each other speaker's call in the same phase and round, the nearest
//     in time;
//   - the same speaker's previous and next call of the same phase and
//     round (a retry, the next step of a loop).
//
// A tool execution pairs with the previous and next run of the same tool
// by the same speaker.
func comparePairs(turns []query.Turn) map[string][]pairLink {
	calls := groupCalls(turns)
	type stage struct {
		phase string
		round uint16
	}
	var (
		bySpeaker = map[string][]int{}    // provider calls by speaker
		byStage   = map[stage][]int{}     // provider calls by phase and round
		byTool    = map[[2]string][]int{} // tool runs by speaker and tool
	)
	for i, c := range calls {
		h := c.head()
		if tool := c.tool(); tool != "" {
			k := [2]string{c.who(), tool}
			byTool[k] = append(byTool[k], i)
			continue
		}
		bySpeaker[c.who()] = append(bySpeaker[c.who()], i)
		st := stage{query.PhaseKey(h.Phase), h.Round}
		byStage[st] = append(byStage[st], i)
	}

	pairs := make(map[string][]pairLink, len(turns))
	for i, c := range calls {
		h := c.head()
		link := func(kind, label string, j int) pairLink {
			return pairLink{Kind: kind, Label: label, Call: calls[j].ID, URL: compareURL(h.ThreadID, c.ID, calls[j].ID)}
		}
		var links []pairLink
		if tool := c.tool(); tool != "" {
			runs := byTool[[2]string{c.who(), tool}]
			k := slices.Index(runs, i)
			if k > 0 {
				links = append(links, link("sequence", "vs previous "+tool, runs[k-1]))
			}
			if k+1 < len(runs) {
				links = append(links, link("sequence", "vs next "+tool, runs[k+1]))
			}
		} else {
			phase := query.PhaseKey(h.Phase)
			mine := bySpeaker[c.who()]
			for _, next := range []bool{false, true} {
				if j, ok := adjacentRound(calls, mine, i, next); ok {
					label := "vs round " + strconv.Itoa(int(calls[j].head().Round))
					if query.PhaseKey(calls[j].head().Phase) != phase {
						label = "vs " + calls[j].where()
					}
					links = append(links, link("round", label, j))
				}
			}
			stageCalls := byStage[stage{phase, h.Round}]
			links = append(links, otherSpeakers(calls, stageCalls, i, link)...)
			var same []int
			for _, j := range stageCalls {
				if calls[j].who() == c.who() {
					same = append(same, j)
				}
			}
			k := slices.Index(same, i)
			if k > 0 {
				links = append(links, link("sequence", "vs previous call", same[k-1]))
			}
			if k+1 < len(same) {
				links = append(links, link("sequence", "vs next call", same[k+1]))
			}
		}
		if len(links) == 0 {
			continue
		}
		pairs[c.ID] = links
		for _, t := range c.Turns {
			pairs[t.TurnID] = links
		}
	}
	return pairs
}

// adjacentRound returns, of the calls mine (one speaker's, in order), the
// one in the nearest round before calls[i]'s (after it, when next): of
// that round's calls, those of calls[i]'s phase when any, and of those the
// last (the first, when next).
func adjacentRound(calls []call, mine []int, i int, next bool) (int, bool) {
	round := calls[i].head().Round
	phase := query.PhaseKey(calls[i].head().Phase)
	best, found := 0, false
	better := func(j int) bool {
		r, br := calls[j].head().Round, calls[best].head().Round
		if r != br {
			return (r < br) == next
		}
		same := query.PhaseKey(calls[j].head().Phase) == phase
		if bestSame := query.PhaseKey(calls[best].head().Phase) == phase; same != bestSame {
			return same
		}
		return !next // mine is in order: a later one is last
	}
	for _, j := range mine {
		r := calls[j].head().Round
		if r == round || (r > round) != next {
			continue
		}
		if !found || better(j) {
			best, found = j, true
		}
	}
	return best, found
}

// otherSpeakers links calls[i] with each other speaker's call among
// stageCalls nearest to it in time, at most maxSpeakerPairs speakers, in
// the order they first spoke.
func otherSpeakers(calls []call, stageCalls []int, i int, link func(kind, label string, j int) pairLink) []pairLink {
	var (
		order   []string
		nearest = map[string]int{}
	)
	start := calls[i].head().StartNS
	gap := func(j int) uint64 {
		s := calls[j].head().StartNS
		return max(s, start) - min(s, start)
	}
	for _, j := range stageCalls {
		who := calls[j].who()
		if who == calls[i].who() {
			continue
		}
		k, ok := nearest[who]
		if !ok {
			if len(order) == maxSpeakerPairs {
				continue
			}
			order = append(order, who)
		}
		if !ok || gap(j) < gap(k) {
			nearest[who] = j
		}
	}
	links := make([]pairLink, 0, len(order))
	for _, who := range order {
		j := nearest[who]
		links = append(links, link("speaker", "vs "+who+", "+calls[j].where(), j))
	}
	return links
}

// compareURL is the page comparing calls a and b of a thread.
func compareURL(thread, a, b string) string {
	return threadURL(thread) + "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
}
