package viewer

import (
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Views of a thread page.
const (
	viewPhase    = "phase"    // by phase, then round: the pipeline's order
	viewTimeline = "timeline" // every call in the order it started
)

// threadView is what the thread page renders: the thread and its calls,
// grouped by phase then round and in start order, and the filters that
// chose them.
type threadView struct {
	Thread      store.Thread
	View        string      // viewPhase or viewTimeline
	Phases      []phaseView // the calls by phase, then round; also the outline
	Bands       []bandView  // the calls in start order, a band per run of one phase and round
	Running     int         // prompts still waiting for their answer
	Interrupted int         // prompts whose recorder died before the answer
	Errors      int         // calls that failed and were not retried
	Retried     int         // calls that failed and were retried (store.Retried)
	Live        bool        // the page follows the thread: a call runs, or one ended lately

	Filter  filterForm
	Chips   []phaseChip
	Facets  store.Facets
	Traces  []traceLink
	Session string             // the thread's current provider session
	Costs   []store.PhaseTotal // usage and cost of the whole thread by phase
	Shown   int                // turns on the page
	Total   int                // turns that pass the filters
	LastNS  uint64             // start of the newest turn on the page
	Earlier int                // of the hidden turns, how many the "earlier" link adds
	// EarlierURL reloads the page with a window that holds Earlier more
	// turns; MarkdownURL is the filtered thread as markdown; ExportURL
	// downloads the whole thread as an export; ViewURLs switch views.
	EarlierURL, MarkdownURL, ExportURL, PhaseURL, TimelineURL string
}

// WindowChanged says whether the request asked for another window than
// the default, which the filter form then keeps.
func (v threadView) WindowChanged() bool { return v.Filter.Limit != turnWindow }

// Hidden is how many turns pass the filters but fall outside the window.
func (v threadView) Hidden() int { return v.Total - v.Shown }

// Timeline says whether the page shows its calls in start order.
func (v threadView) Timeline() bool { return v.View == viewTimeline }

// phaseChip is one phase's toggle in the filter bar.
type phaseChip struct {
	store.PhaseCount
	On bool
}

type phaseView struct {
	Key    string
	Name   string // as first written, or the canonical name capitalised
	Rounds []roundView
}

// MultiRound says whether the phase shows round headings.
func (p phaseView) MultiRound() bool { return len(p.Rounds) > 1 }

// First is the id of the phase's first card, where the outline jumps.
func (p phaseView) First() string { return p.Rounds[0].Calls[0].ID }

type roundView struct {
	Round uint16
	Calls []*callView
}

// bandView is a run of calls of one phase and round in the timeline.
type bandView struct {
	Key, Name string
	Round     uint16
	Calls     []*callView
}

// traceLink links a trace of the thread to its page.
type traceLink struct{ ID, URL string }

// traceURL is the path of a trace's page.
func traceURL(id string) string { return "/traces/" + url.PathEscape(id) }

// newThreadView makes the cards of turns, sorted by start time, and
// groups them into phases in canonical order, then rounds in ascending
// order, and into the timeline's bands; q is the search whose matches the
// page marks.
func newThreadView(th store.Thread, turns []store.Turn, q string) threadView {
	v := threadView{Thread: th, Shown: len(turns), View: viewPhase}
	b := newTurnBuilder(turns, q)
	views := make([]turnView, len(turns))
	for i, t := range turns {
		views[i] = b.view(t)
		if t.Running {
			v.Running++
		}
		if t.Interrupted {
			v.Interrupted++
		}
		v.LastNS = max(v.LastNS, t.StartNS)
	}
	calls := buildCards(views, q)
	eachCall(calls, func(c *callView) {
		switch {
		case c.Retried:
			v.Retried++
		case c.Failed:
			v.Errors++
		}
	})
	at := func(c *callView) (string, uint16) { return c.Phase, c.Round }
	for _, g := range page.GroupByPhase(calls, at, func(c *callView) *callView { return c }) {
		pv := phaseView{Key: g.Key, Name: g.Name}
		for _, r := range g.Rounds {
			pv.Rounds = append(pv.Rounds, roundView{Round: r.Round, Calls: r.Turns})
		}
		v.Phases = append(v.Phases, pv)
	}
	for _, c := range calls {
		if n := len(v.Bands); n == 0 || v.Bands[n-1].Key != c.PhaseKey || v.Bands[n-1].Round != c.Round {
			v.Bands = append(v.Bands, bandView{Key: c.PhaseKey, Name: page.PhaseName(c.PhaseKey, c.Phase), Round: c.Round})
		}
		band := &v.Bands[len(v.Bands)-1]
		band.Calls = append(band.Calls, c)
	}
	return v
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
