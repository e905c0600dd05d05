package viewer

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// collapseLines is how many lines of a turn's content show before the rest
// hides behind "Show full".
const collapseLines = 30

// canonicalPhases is the order in which a thread page shows the phases of a
// pipeline; other phases follow in the order they first appear.
var canonicalPhases = []string{"plan", "review", "execute", "verify", "revision", "critique", "adjudicate"}

// parentVerbs says how a turn relates to the turn it threads under, by the
// turn's own phase.
var parentVerbs = map[string]string{
	"review":     "reviews",
	"verify":     "verifies",
	"revision":   "revises",
	"critique":   "critiques",
	"adjudicate": "adjudicates",
}

// threadView is what the thread page renders: the thread and its turns
// grouped by phase, then round.
type threadView struct {
	Thread  Thread
	Phases  []phaseView
	Running int // prompts still waiting for their answer
	Errors  int
}

type phaseView struct {
	Name   string // as first written, or the canonical name capitalised
	Rounds []roundView
}

// MultiRound says whether the phase shows round headings.
func (p phaseView) MultiRound() bool { return len(p.Rounds) > 1 }

type roundView struct {
	Round uint16
	Turns []turnView
}

type turnView struct {
	Turn
	Messages    []message // the content when it is chat messages JSON
	Lines       int       // lines of content as shown
	Collapsed   bool      // more than collapseLines lines
	Failed      bool      // role error or status error
	ParentVerb  string
	ParentLabel string // who said the parent turn; "" when it is not on this page
}

// ShowContent says whether the content adds anything to the error message
// shown above it (an error turn's content is usually its message).
func (t turnView) ShowContent() bool {
	return t.Content != "" && (!t.Failed || strings.TrimSpace(t.Content) != strings.TrimSpace(t.Error))
}

// newThreadView groups turns, sorted by start time, into phases in
// canonical order, then rounds in ascending order.
func newThreadView(th Thread, turns []Turn) threadView {
	v := threadView{Thread: th}
	byID := make(map[string]*Turn, len(turns))
	for i := range turns {
		byID[turns[i].TurnID] = &turns[i]
	}

	type group struct {
		name   string
		rounds map[uint16][]turnView
	}
	groups := map[string]*group{}
	var firstSeen []string // phase keys in order of first appearance
	for _, t := range turns {
		key := strings.ToLower(strings.TrimSpace(t.Phase))
		g, ok := groups[key]
		if !ok {
			g = &group{name: phaseName(key, t.Phase), rounds: map[uint16][]turnView{}}
			groups[key] = g
			firstSeen = append(firstSeen, key)
		}
		tv := newTurnView(t, byID)
		if tv.Running {
			v.Running++
		}
		if tv.Failed {
			v.Errors++
		}
		g.rounds[t.Round] = append(g.rounds[t.Round], tv)
	}

	order := make([]string, 0, len(firstSeen))
	for _, p := range canonicalPhases {
		if _, ok := groups[p]; ok {
			order = append(order, p)
		}
	}
	for _, key := range firstSeen {
		if !slices.Contains(canonicalPhases, key) {
			order = append(order, key)
		}
	}
	for _, key := range order {
		g := groups[key]
		pv := phaseView{Name: g.name}
		for r, ts := range g.rounds {
			pv.Rounds = append(pv.Rounds, roundView{Round: r, Turns: ts})
		}
		slices.SortFunc(pv.Rounds, func(a, b roundView) int { return int(a.Round) - int(b.Round) })
		v.Phases = append(v.Phases, pv)
	}
	return v
}

// phaseName is the heading of a phase group: canonical phases capitalised,
// others as first written.
func phaseName(key, written string) string {
	switch {
	case key == "":
		return "No phase"
	case slices.Contains(canonicalPhases, key):
		return strings.ToUpper(key[:1]) + key[1:]
	default:
		return strings.TrimSpace(written)
	}
}

func newTurnView(t Turn, byID map[string]*Turn) turnView {
	tv := turnView{
		Turn:   t,
		Lines:  contentLines(t.Content),
		Failed: t.Role == schema.RoleError || t.Status == schema.StatusError,
	}
	if msgs, ok := parseMessages(t.Content); ok {
		tv.Messages, tv.Lines = msgs, 0
		for _, m := range msgs {
			tv.Lines += 1 + contentLines(m.Text) // the role label takes a line
		}
	}
	tv.Collapsed = tv.Lines > collapseLines
	if t.ParentTurnID != "" {
		tv.ParentVerb = parentVerbs[strings.ToLower(strings.TrimSpace(t.Phase))]
		if tv.ParentVerb == "" {
			tv.ParentVerb = "replies to"
		}
		if p, ok := byID[t.ParentTurnID]; ok {
			tv.ParentLabel = turnLabel(p)
		}
	}
	return tv
}

// turnLabel names a turn in a link to it: who said it, and what.
func turnLabel(t *Turn) string {
	who := t.Speaker
	if who == "" {
		who = t.Agent
	}
	if who == "" {
		who = t.Model
	}
	parts := slices.DeleteFunc([]string{who, t.Phase, t.Role}, func(s string) bool { return s == "" })
	return strings.Join(parts, " · ")
}

// contentLines counts the lines of s, a trailing newline not opening one.
func contentLines(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// paletteSize is the number of provider colours app.css defines
// (.prov-0 … .prov-7).
const paletteSize = 8

// knownProviders pins the common providers to a colour each, so that they
// look the same in every installation; others get one by hash.
var knownProviders = map[string]int{
	"openai":      0,
	"anthropic":   1,
	"gcp.gemini":  2,
	"gemini":      2,
	"google":      2,
	"gcp.vertex":  2,
	"mistral_ai":  3,
	"mistral":     3,
	"aws.bedrock": 4,
	"azure":       5,
	"ollama":      6,
	"deepseek":    7,
}

// providerClass is the CSS class colouring a provider's badges. It is
// always one of a fixed set, never derived from the name's characters.
func providerClass(provider string) string {
	p := strings.ToLower(strings.TrimSpace(provider))
	if p == "" {
		return "prov-none"
	}
	if i, ok := knownProviders[p]; ok {
		return "prov-" + strconv.Itoa(i)
	}
	h := fnv.New32a()
	h.Write([]byte(p))
	return "prov-" + strconv.Itoa(int(h.Sum32()%paletteSize))
}
