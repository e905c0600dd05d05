package viewer

import (
	"bytes"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// liveAfter is how recently a thread must have been updated for its page
// to follow it when no call runs: a pipeline between two calls.
const liveAfter = 2 * time.Minute

// maxLiveSpans bounds the running calls a live request names.
const maxLiveSpans = 1000

// viewURL is the thread page of the request in the given view, the other
// filters kept; the default view leaves the parameter out.
func viewURL(id string, q url.Values, view string) string {
	q = maps.Clone(q)
	q.Del("view")
	if view != viewPhase {
		q.Set("view", view)
	}
	if enc := q.Encode(); enc != "" {
		return threadURL(id) + "?" + enc
	}
	return threadURL(id)
}

// liveCard is one card a live page adds or replaces: its HTML, and where
// it goes.
type liveCard struct {
	ID        string `json:"id"`
	Phase     string `json:"phase"`      // the phase key
	PhaseName string `json:"phase_name"` // its heading
	Round     uint16 `json:"round"`
	Running   bool   `json:"running"`
	HTML      string `json:"html"`
}

// liveResponse is what GET /threads/:id/live answers.
type liveResponse struct {
	Cards  []liveCard `json:"cards"`
	LastNS uint64     `json:"last_ns"` // the newest start the page has now seen
}

// threadLive answers GET /threads/:id/live with the cards a live thread
// page lacks: the calls that started after its newest turn (after, in
// Unix nanoseconds) and those it shows running (running, span ids
// separated by commas), rendered as the page renders them, with the page's
// filters.
func (s *Server) threadLive(c *gin.Context) {
	v := c.Request.URL.Query()
	f, form, err := parseThreadQuery(v, turnWindow, time.Now())
	if err != nil {
		s.apiError(c, err)
		return
	}
	ch := &store.Changes{}
	if ch.AfterNS, err = strconv.ParseUint(v.Get("after"), 10, 64); err != nil {
		s.apiError(c, page.BadParam("after", "%q is not a time in Unix nanoseconds", v.Get("after")))
		return
	}
	if r := strings.TrimSpace(v.Get("running")); r != "" {
		ch.Spans = strings.Split(r, ",")
	}
	if len(ch.Spans) > maxLiveSpans {
		s.apiError(c, page.BadParam("running", "%d calls, at most %d", len(ch.Spans), maxLiveSpans))
		return
	}
	f.Changed, f.LeaveHistory = ch, true
	turns, err := s.store.Turns(c.Request.Context(), c.Param("id"), f, form.Limit, pageContentBytes)
	if err != nil {
		s.apiError(c, err)
		return
	}
	view := newThreadView(store.Thread{}, turns, form.Q)
	res := liveResponse{Cards: []liveCard{}, LastNS: max(ch.AfterNS, view.LastNS)}
	for _, band := range view.Bands {
		for _, call := range band.Calls {
			var buf bytes.Buffer
			if err := s.pages.tmpl.ExecuteTemplate(&buf, "call", call); err != nil {
				s.apiError(c, err)
				return
			}
			res.Cards = append(res.Cards, liveCard{
				ID: call.ID, Phase: call.PhaseKey, PhaseName: band.Name, Round: call.Round,
				Running: call.Running, HTML: buf.String(),
			})
		}
	}
	s.writeJSON(c, http.StatusOK, res)
}

// turnFull answers GET /threads/:id/turns/:turn_id/full with the whole of
// one turn as its card shows it, every message and no part cut: the HTML
// that "Show full" puts in place of the card's start.
func (s *Server) turnFull(c *gin.Context) {
	turns, err := s.store.Turns(c.Request.Context(), c.Param("id"), store.TurnFilter{TurnID: c.Param("turn_id")}, 1, store.AllContent)
	if err == nil && len(turns) == 0 {
		err = store.ErrTurnNotFound
	}
	if err != nil {
		s.apiError(c, err)
		return
	}
	b := newTurnBuilder(turns, strings.TrimSpace(c.Query("q")))
	b.full = true
	s.html(c, http.StatusOK, "turnBody", b.view(turns[0]))
}
