package viewer

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// call is one provider call or tool execution of a thread: the turns of
// one span, in the order said. A turn without a span is a call alone.
type call struct {
	ID    string // the span's id, or the lone turn's
	Turns []store.Turn
}

// callID is the id of the call t belongs to.
func callID(t store.Turn) string {
	if t.SpanID != "" {
		return t.SpanID
	}
	return t.TurnID
}

// groupCalls gathers turns, in the order said, into calls, in the order
// they started. Spans with no prompt, answer or tool row (a system
// message alone) are no call.
func groupCalls(turns []store.Turn) []call {
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
func (c call) head() *store.Turn {
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
// each of its turns: the same speaker's neighbouring rounds and calls, and
// the other speakers of its round (docs/design/compare.md).
func comparePairs(turns []store.Turn) map[string][]pairLink {
	x := newPairIndex(groupCalls(turns))
	pairs := make(map[string][]pairLink, len(turns))
	for i, c := range x.calls {
		links := x.partners(i)
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

// stage is a phase (its key) and round.
type stage struct {
	phase string
	round uint16
}

// pairIndex holds a thread's calls arranged so that each call finds its
// partners without a pass over all the others.
type pairIndex struct {
	calls []call
	who   []string // by call: speaker, else agent, else model
	where []stage
	tool  []string
	at    []int // by call: its place in its runs or spoke list

	runs   map[[2]string][]int        // tool runs by speaker and tool
	spoke  map[stage]map[string][]int // provider calls by stage and speaker
	order  map[stage][]string         // the speakers of a stage, in the order they first spoke
	rounds map[string][]uint16        // the rounds a speaker made provider calls in, ascending
	ends   map[roundEnd][2]int        // first and last call of a speaker's round, of one phase or of any
}

// roundEnd keys the first and last call of a speaker in a round, of one
// phase, or of all phases (anyPhase).
type roundEnd struct {
	who, phase string
	round      uint16
}

// anyPhase stands for every phase in a roundEnd; no phase key holds a NUL.
const anyPhase = "\x00"

func newPairIndex(calls []call) *pairIndex {
	n := len(calls)
	x := &pairIndex{
		calls: calls, who: make([]string, n), where: make([]stage, n), tool: make([]string, n), at: make([]int, n),
		runs: map[[2]string][]int{}, spoke: map[stage]map[string][]int{}, order: map[stage][]string{},
		rounds: map[string][]uint16{}, ends: map[roundEnd][2]int{},
	}
	for i, c := range calls {
		h := c.head()
		x.who[i], x.where[i], x.tool[i] = c.who(), stage{page.PhaseKey(h.Phase), h.Round}, c.tool()
		if x.tool[i] != "" {
			k := [2]string{x.who[i], x.tool[i]}
			x.at[i] = len(x.runs[k])
			x.runs[k] = append(x.runs[k], i)
			continue
		}
		st, who := x.where[i], x.who[i]
		if x.spoke[st] == nil {
			x.spoke[st] = map[string][]int{}
		}
		if len(x.spoke[st][who]) == 0 {
			x.order[st] = append(x.order[st], who)
		}
		x.at[i] = len(x.spoke[st][who])
		x.spoke[st][who] = append(x.spoke[st][who], i)
		for _, k := range []roundEnd{{who, st.phase, st.round}, {who, anyPhase, st.round}} {
			e, ok := x.ends[k]
			if !ok {
				e[0] = i
				if k.phase == anyPhase {
					x.rounds[who] = append(x.rounds[who], st.round) // a round the speaker is new in
				}
			}
			e[1] = i
			x.ends[k] = e
		}
	}
	for _, rs := range x.rounds {
		slices.Sort(rs)
	}
	return x
}

// partners returns the links of call i to its partners.
func (x *pairIndex) partners(i int) []pairLink {
	c := x.calls[i]
	link := func(kind, label string, j int) pairLink {
		return pairLink{Kind: kind, Label: label, Call: x.calls[j].ID, URL: compareURL(c.head().ThreadID, c.ID, x.calls[j].ID)}
	}
	var links []pairLink
	if tool := x.tool[i]; tool != "" {
		runs := x.runs[[2]string{x.who[i], tool}]
		if k := x.at[i]; k > 0 {
			links = append(links, link("sequence", "vs previous "+tool, runs[k-1]))
		}
		if k := x.at[i]; k+1 < len(runs) {
			links = append(links, link("sequence", "vs next "+tool, runs[k+1]))
		}
		return links
	}
	st, who := x.where[i], x.who[i]
	for _, next := range []bool{false, true} {
		if j, ok := x.adjacentRound(who, st, next); ok {
			label := "vs round " + strconv.Itoa(int(x.where[j].round))
			if x.where[j].phase != st.phase {
				label = "vs " + x.calls[j].where()
			}
			links = append(links, link("round", label, j))
		}
	}
	others := 0
	for _, other := range x.order[st] {
		if other == who {
			continue
		}
		if others++; others > maxSpeakerPairs {
			break
		}
		j := x.nearest(x.spoke[st][other], c.Turns[0].StartNS)
		links = append(links, link("speaker", "vs "+other+", "+x.calls[j].where(), j))
	}
	same := x.spoke[st][who]
	if k := x.at[i]; k > 0 {
		links = append(links, link("sequence", "vs previous call", same[k-1]))
	}
	if k := x.at[i]; k+1 < len(same) {
		links = append(links, link("sequence", "vs next call", same[k+1]))
	}
	return links
}

// adjacentRound returns the speaker's call in the nearest round before
// st's (after it, when next): of that round's calls, those of st's phase
// when there are any, and of those the last (the first, when next).
func (x *pairIndex) adjacentRound(who string, st stage, next bool) (int, bool) {
	rs := x.rounds[who]
	k, _ := slices.BinarySearch(rs, st.round) // rs holds st.round: the speaker made this call
	if next {
		k++
	} else {
		k--
	}
	if k < 0 || k >= len(rs) {
		return 0, false
	}
	e, ok := x.ends[roundEnd{who, st.phase, rs[k]}]
	if !ok {
		e = x.ends[roundEnd{who, anyPhase, rs[k]}]
	}
	if next {
		return e[0], true
	}
	return e[1], true
}

// nearest returns, of calls (in the order they started), the one whose
// start is nearest to ns.
func (x *pairIndex) nearest(calls []int, ns uint64) int {
	k, _ := slices.BinarySearchFunc(calls, ns, func(j int, ns uint64) int {
		return cmp.Compare(x.calls[j].Turns[0].StartNS, ns)
	})
	if k == len(calls) || (k > 0 && ns-x.calls[calls[k-1]].Turns[0].StartNS <= x.calls[calls[k]].Turns[0].StartNS-ns) {
		k--
	}
	return calls[k]
}

// compareURL is the page comparing calls a and b of a thread.
func compareURL(thread, a, b string) string {
	return threadURL(thread) + "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
}
