package viewer

import (
	"hash/fnv"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/viewer/query"
)

// collapseLines is how many lines of a turn's content show before the rest
// hides behind "Show full".
const collapseLines = 30

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
// grouped by phase, then round, and the filters that chose them.
type threadView struct {
	Thread      query.Thread
	Phases      []phaseView
	Running     int // prompts still waiting for their answer
	Interrupted int // prompts whose recorder died before the answer
	Errors      int

	Filter  filterForm
	Chips   []phaseChip
	Facets  query.Facets
	Traces  []traceLink
	Session string             // the thread's current provider session
	Costs   []query.PhaseTotal // usage and cost of the whole thread by phase
	Shown   int                // turns on the page
	Total   int                // turns that pass the filters
	Earlier int                // of the hidden turns, how many the "earlier" link adds
	// EarlierURL reloads the page with a window that holds Earlier more
	// turns; MarkdownURL is the filtered thread as markdown; ExportURL
	// downloads the whole thread as an export.
	EarlierURL, MarkdownURL, ExportURL string
}

// WindowChanged says whether the request asked for another window than
// the default, which the filter form then keeps.
func (v threadView) WindowChanged() bool { return v.Filter.Limit != turnWindow }

// Hidden is how many turns pass the filters but fall outside the window.
func (v threadView) Hidden() int { return v.Total - v.Shown }

// phaseChip is one phase's toggle in the filter bar.
type phaseChip struct {
	query.PhaseCount
	On bool
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
	query.Turn
	SpeakerSegs []Segment     // the speaker, split at search matches
	Text        []Segment     // the content, unless it is messages
	Messages    []messageView // the content when it is chat messages JSON
	// Earlier are the leading messages that repeat history an earlier turn
	// of the page showed: hidden behind "Show full input".
	Earlier     []messageView
	Lines       int  // lines of content as shown
	Collapsed   bool // more than collapseLines lines
	Failed      bool // role error or status error
	ParentVerb  string
	ParentLabel string // who said the parent turn; "" when it is not on this page
	// PairID is the other half of a tool call and its result, on this
	// page; PairVerb says which half it is.
	PairID, PairVerb, PairLabel string
}

// messageView is one chat message of a turn, split at search matches.
type messageView struct {
	Role string
	Text []Segment
}

// ShowContent says whether the content adds anything to the error message
// shown above it (an error turn's content is usually its message).
func (t turnView) ShowContent() bool {
	return t.Content != "" && (!t.Failed || strings.TrimSpace(t.Content) != strings.TrimSpace(t.Error))
}

// TraceURL is the turn's span on its trace's page.
func (t turnView) TraceURL() string {
	return traceURL(t.TraceID) + "?span=" + url.QueryEscape(t.SpanID)
}

// traceLink links a trace of the thread to its page.
type traceLink struct{ ID, URL string }

// traceURL is the path of a trace's page.
func traceURL(id string) string { return "/traces/" + url.PathEscape(id) }

// newThreadView groups turns, sorted by start time, into phases in
// canonical order, then rounds in ascending order; q is the search whose
// matches the page marks.
func newThreadView(th query.Thread, turns []query.Turn, q string) threadView {
	v := threadView{Thread: th, Shown: len(turns)}
	b := newTurnBuilder(turns, q)

	type group struct {
		name   string
		rounds map[uint16][]turnView
	}
	groups := map[string]*group{}
	var firstSeen []string // phase keys in order of first appearance
	for _, t := range turns {
		key := query.PhaseKey(t.Phase)
		g, ok := groups[key]
		if !ok {
			g = &group{name: query.PhaseName(key, t.Phase), rounds: map[uint16][]turnView{}}
			groups[key] = g
			firstSeen = append(firstSeen, key)
		}
		tv := b.view(t)
		if tv.Running {
			v.Running++
		}
		if tv.Interrupted {
			v.Interrupted++
		}
		if tv.Failed {
			v.Errors++
		}
		g.rounds[t.Round] = append(g.rounds[t.Round], tv)
	}

	for _, key := range query.PhaseOrder(firstSeen) {
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

// turnBuilder makes the views of a page's turns, in the order they were
// said: what a turn shows depends on the turns before it (history already
// shown) and around it (its parent, its tool call or result).
type turnBuilder struct {
	q       string
	byID    map[string]*query.Turn
	calls   map[string]*query.Turn // tool calls by tool_call_id
	results map[string]*query.Turn // tool results by tool_call_id
	seen    map[string]bool        // messages the page showed so far, by messageKey
}

func newTurnBuilder(turns []query.Turn, q string) *turnBuilder {
	b := &turnBuilder{
		q:       q,
		byID:    make(map[string]*query.Turn, len(turns)),
		calls:   map[string]*query.Turn{},
		results: map[string]*query.Turn{},
		seen:    map[string]bool{},
	}
	for i := range turns {
		t := &turns[i]
		b.byID[t.TurnID] = t
		if t.ToolCallID == "" {
			continue
		}
		switch t.Role {
		case schema.RoleToolCall:
			b.calls[t.ToolCallID] = t
		case schema.RoleToolResult, schema.RoleToolResultError:
			b.results[t.ToolCallID] = t
		}
	}
	return b
}

// messageKey identifies a message when looking for repeated history.
func messageKey(role, text string) string { return role + "\x00" + strings.TrimSpace(text) }

// view returns the view of t; call it for each turn in the order said.
func (b *turnBuilder) view(t query.Turn) turnView {
	tv := turnView{
		Turn:        t,
		SpeakerSegs: highlight(t.Speaker, b.q),
		Lines:       contentLines(t.Content),
		Failed:      t.Failed(),
	}
	if msgs, ok := genai.Decode(t.Content); ok {
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Text()
		}
		earlier := 0
		for earlier < len(msgs)-1 && b.seen[messageKey(msgs[earlier].Role, texts[earlier])] {
			earlier++
		}
		tv.Lines = 0
		for i, m := range msgs {
			b.seen[messageKey(m.Role, texts[i])] = true
			mv := messageView{Role: roleLabel(m), Text: highlight(texts[i], b.q)}
			if i < earlier {
				tv.Earlier = append(tv.Earlier, mv)
				continue
			}
			tv.Messages = append(tv.Messages, mv)
			tv.Lines += 1 + contentLines(texts[i]) // the role label takes a line
		}
	} else {
		tv.Text = highlight(t.Content, b.q)
		if t.Role == schema.RoleResponse {
			// The next prompt repeats an answer as the assistant's message.
			b.seen[messageKey("assistant", t.Content)] = true
		}
	}
	tv.Collapsed = tv.Lines > collapseLines
	if t.ParentTurnID != "" {
		tv.ParentVerb = parentVerbs[query.PhaseKey(t.Phase)]
		if tv.ParentVerb == "" {
			tv.ParentVerb = "replies to"
		}
		if p, ok := b.byID[t.ParentTurnID]; ok {
			tv.ParentLabel = turnLabel(p)
		}
	}
	if t.ToolCallID != "" {
		var (
			pair *query.Turn
			verb string
		)
		switch t.Role {
		case schema.RoleToolCall:
			pair, verb = b.results[t.ToolCallID], "result"
		case schema.RoleToolResult, schema.RoleToolResultError:
			pair, verb = b.calls[t.ToolCallID], "result of"
		}
		if pair != nil {
			tv.PairID, tv.PairVerb, tv.PairLabel = pair.TurnID, verb, turnLabel(pair)
			if pair.ToolName != "" {
				tv.PairLabel += " · " + pair.ToolName
			}
		}
	}
	return tv
}

// turnLabel names a turn in a link to it: who said it, and what.
func turnLabel(t *query.Turn) string {
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
