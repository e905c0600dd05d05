package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Bounds of get_thread.
const (
	defaultTurns     = 100
	maxTurns         = 200
	defaultTurnBytes = 2 << 10
)

const getThreadDoc = `Read one thread as the viewer's thread page shows it: its turns grouped by phase in pipeline order ` +
	`(plan, review, execute, verify, revision, critique, adjudicate, then others), then by round, each turn with its ` +
	`speaker, role, model, status, tokens, cost and text (chat messages as role and text). Filters as on the page: ` +
	`phase, role, speaker, session, agent (main or a sub-agent), tool, starred, q (a text in the content or speaker), ` +
	`from/to (RFC 3339, a date, or an age such as 24h or 7d). At most 200 turns a call, the newest that pass the ` +
	`filters (limit, default 100); each text is cut to text_bytes (default 2048, at most 65536) and shorter still ` +
	`when the answer would pass 256 KB. A cut text says cut; turn_id reads that one turn with a larger text_bytes.`

type getThreadIn struct {
	ThreadID  string `json:"thread_id" jsonschema:"the thread's id, as list_threads or search gives it"`
	Phase     words  `json:"phase,omitempty" jsonschema:"only these phases (plan, review, ...; \"\" for turns without one); none means all"`
	Role      string `json:"role,omitempty" jsonschema:"only this role: prompt, response, system, tool_call, tool_result, tool_result_error, error, ..."`
	Speaker   string `json:"speaker,omitempty" jsonschema:"only turns of this speaker"`
	Session   string `json:"session,omitempty" jsonschema:"only turns of this provider session"`
	Agent     string `json:"agent,omitempty" jsonschema:"only the main agent's turns (main) or one sub-agent's"`
	Tool      string `json:"tool,omitempty" jsonschema:"only calls of this tool and their results"`
	Starred   bool   `json:"starred,omitempty" jsonschema:"only starred turns"`
	Q         string `json:"q,omitempty" jsonschema:"only turns whose content or speaker holds this text, any case"`
	From      string `json:"from,omitempty" jsonschema:"only turns that started at or after this time: RFC 3339, a date, or an age such as 24h"`
	To        string `json:"to,omitempty" jsonschema:"only turns that started at or before this time, like from"`
	TurnID    string `json:"turn_id,omitempty" jsonschema:"only this turn, its content read whole (up to text_bytes)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"how many turns, the newest that pass the filters: 1 to 200 (default 100)"`
	TextBytes *int   `json:"text_bytes,omitempty" jsonschema:"bytes of each turn's text: 256 to 65536 (default 2048)"`
}

type getThreadOut struct {
	Thread threadOut                  `json:"thread"`
	Phases []page.PhaseGroup[turnOut] `json:"phases"`
	Shown  int                        `json:"shown"` // turns in phases
	Total  int                        `json:"total"` // turns that pass the filters
	// TextBytes is the cut of each text in this answer.
	TextBytes int `json:"text_bytes"`
	// More says what the answer left out and how to read it; "" when
	// nothing.
	More string `json:"more,omitempty"`
}

func (s *server) getThread(ctx context.Context, in getThreadIn) (getThreadOut, error) {
	id := strings.TrimSpace(in.ThreadID)
	if id == "" {
		return getThreadOut{}, page.BadParam("thread_id", "is empty: list_threads or search gives thread ids")
	}
	f, err := in.filter(time.Now())
	if err != nil {
		return getThreadOut{}, err
	}
	limit, err := inRange("limit", in.Limit, defaultTurns, 1, maxTurns)
	if err != nil {
		return getThreadOut{}, err
	}
	n, err := textBytes(in.TextBytes, defaultTurnBytes)
	if err != nil {
		return getThreadOut{}, err
	}
	contentBytes := store.PageContentBytes
	if f.TurnID != "" {
		contentBytes = store.AllContent
	}
	var (
		th    store.Thread
		turns []store.Turn
		total int
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { th, err = s.store.Thread(gctx, id); return err })
	g.Go(func() (err error) { turns, err = s.store.Turns(gctx, id, f, limit, contentBytes); return err })
	g.Go(func() (err error) { total, err = s.store.CountTurns(gctx, id, f); return err })
	if err := g.Wait(); err != nil {
		return getThreadOut{}, fmt.Errorf("thread %q: %w", id, err)
	}
	if f.TurnID != "" && len(turns) == 0 {
		return getThreadOut{}, fmt.Errorf("thread %q: %w", id, store.ErrTurnNotFound)
	}
	total = max(total, len(turns)) // a turn stored after the count was read
	return shrink(n, len(turns), func(n, drop int) getThreadOut {
		out := getThreadOut{Thread: newThreadOut(th), Shown: len(turns) - drop, Total: total, TextBytes: n}
		cut := false
		out.Phases = page.GroupByPhase(turns[drop:], saidIn, func(t store.Turn) turnOut {
			v := newTurnOut(t, n)
			cut = cut || v.Cut
			return v
		})
		out.More = moreTurns(out.Total-out.Shown, cut)
		return out
	}), nil
}

// filter is the turn filter of the arguments, as the thread page reads
// its parameters.
func (in getThreadIn) filter(now time.Time) (store.TurnFilter, error) {
	f := store.TurnFilter{
		Role: strings.TrimSpace(in.Role), Speaker: strings.TrimSpace(in.Speaker), Session: strings.TrimSpace(in.Session),
		Tool: strings.TrimSpace(in.Tool), Query: strings.TrimSpace(in.Q), TurnID: strings.TrimSpace(in.TurnID),
		Starred: in.Starred, HideInternal: true,
	}
	for _, p := range in.Phase {
		if key := page.PhaseKey(p); !slices.Contains(f.Phases, key) {
			f.Phases = append(f.Phases, key)
		}
	}
	switch agent := strings.TrimSpace(in.Agent); strings.ToLower(agent) {
	case "", "all":
	case store.AgentMain:
		f.Agent = store.AgentMain
	default:
		f.Agent = agent
	}
	var err error
	f.FromNS, f.ToNS, err = page.TimeRange(in.From, in.To, now)
	return f, err
}

// moreTurns says what an answer of turns left out: older turns (hidden),
// texts cut.
func moreTurns(hidden int, cut bool) string {
	var says []string
	if hidden > 0 {
		says = append(says, fmt.Sprintf("%d older turns that pass the filters are not in this answer: narrow the filters (from, to, phase, role) or raise limit", hidden))
	}
	if cut {
		says = append(says, "texts marked cut hold only their start: get_thread with turn_id and a larger text_bytes (up to 65536) reads one turn")
	}
	return strings.Join(says, "; ")
}

// saidIn says in which phase and round a turn was said.
func saidIn(t store.Turn) (string, uint16) { return t.Phase, t.Round }
