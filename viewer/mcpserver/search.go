package mcpserver

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Bounds of search.
const (
	defaultHits = 20
	maxHits     = 100
)

const searchDoc = `Find turns across all threads whose content or speaker holds a text (any case, any script), ` +
	`or, without a text, every turn the filters keep, newest first, as the viewer's search page does: each hit with ` +
	`its thread id and title, turn id, speaker, phase, role, model, time and a one-line snippet of the message text ` +
	`around the match (or its start). Filter by project, role, tool, speaker, phase, model, status (ok, error, ` +
	`running, interrupted), starred and time (from/to: RFC 3339, a date, or an age such as 7d): e.g. role tool_call ` +
	`and tool Bash from 7d. At most 100 hits a call (limit, default 20); pass next as after for the older hits. ` +
	`Read a hit's turn whole with get_thread (thread_id, turn_id).`

type searchIn struct {
	Q       string `json:"q,omitempty" jsonschema:"the text to find; without it, every turn the filters keep"`
	Project string `json:"project,omitempty" jsonschema:"only this project"`
	Role    string `json:"role,omitempty" jsonschema:"only this role: prompt, response, system, tool_call, tool_result, error, ..."`
	Tool    string `json:"tool,omitempty" jsonschema:"only turns of this tool"`
	Speaker string `json:"speaker,omitempty" jsonschema:"only turns of this speaker"`
	Phase   string `json:"phase,omitempty" jsonschema:"only turns of this phase (any case)"`
	Model   string `json:"model,omitempty" jsonschema:"only turns of this model"`
	Status  string `json:"status,omitempty" jsonschema:"only turns of this status: ok, error, running or interrupted"`
	Starred bool   `json:"starred,omitempty" jsonschema:"only starred turns"`
	From    string `json:"from,omitempty" jsonschema:"only turns that started at or after this time: RFC 3339, a date, or an age such as 24h"`
	To      string `json:"to,omitempty" jsonschema:"only turns that started at or before this time, like from"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"how many hits: 1 to 100 (default 20)"`
	After   string `json:"after,omitempty" jsonschema:"next of an earlier answer: the hits older than it"`
}

type searchOut struct {
	Hits []hitOut `json:"hits"`
	// Next is where the older hits start (after of the next call), ""
	// when there are none: text, as a JSON number would lose the
	// nanoseconds of its time.
	Next string `json:"next"`
}

type hitOut struct {
	ThreadID    string    `json:"thread_id"`
	ThreadTitle string    `json:"thread_title"`
	Project     string    `json:"project,omitempty"`
	TurnID      string    `json:"turn_id"`
	Speaker     string    `json:"speaker,omitempty"`
	Phase       string    `json:"phase,omitempty"`
	Role        string    `json:"role"`
	Model       string    `json:"model,omitempty"`
	Time        time.Time `json:"time"`
	Snippet     string    `json:"snippet"`
	Internal    bool      `json:"internal,omitempty"`
}

func (s *server) search(ctx context.Context, in searchIn) (searchOut, error) {
	f := store.SearchFilter{
		Q: strings.TrimSpace(in.Q), Project: in.Project, Model: in.Model, Status: in.Status,
		TurnFilter: store.TurnFilter{Role: in.Role, Tool: in.Tool, Speaker: in.Speaker, Starred: in.Starred},
	}
	if in.Phase != "" {
		f.Phases = []string{in.Phase}
	}
	var err error
	if f.After, err = store.ParseSearchCursor("after", in.After); err != nil {
		return searchOut{}, err
	}
	if f.Status != "" && !slices.Contains(store.SearchStatuses, f.Status) {
		return searchOut{}, page.BadParam("status", "%q is none of %s", f.Status, strings.Join(store.SearchStatuses, ", "))
	}
	limit, err := inRange("limit", in.Limit, defaultHits, 1, maxHits)
	if err != nil {
		return searchOut{}, err
	}
	if f.FromNS, f.ToNS, err = page.TimeRange(in.From, in.To, time.Now()); err != nil {
		return searchOut{}, err
	}
	hits, err := s.store.Search(ctx, f, limit+1)
	if err != nil {
		return searchOut{}, err
	}
	out := searchOut{Hits: []hitOut{}}
	if len(hits) > limit {
		hits = hits[:limit]
		last := hits[limit-1]
		out.Next = store.SearchCursor{StartNS: last.StartNS, TurnID: last.TurnID}.String()
	}
	titles, err := s.store.ThreadTitles(ctx, hits)
	if err != nil {
		return searchOut{}, err
	}
	for _, h := range hits {
		out.Hits = append(out.Hits, hitOut{
			ThreadID: h.ThreadID, ThreadTitle: cmp.Or(titles[h.ThreadID], h.ThreadID), Project: h.Project,
			TurnID: h.TurnID, Speaker: h.Speaker, Phase: h.Phase, Role: h.Role, Model: h.Model,
			Time: time.Unix(0, int64(h.StartNS)).UTC(), Snippet: store.Snippet(h.Around, f.Q), Internal: h.Internal,
		})
	}
	return out, nil
}
