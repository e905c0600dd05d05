package viewer

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// threadRoutes serves one thread's page, its turns as JSON and markdown,
// one turn's whole content, and the notes on its turns.
func (s *Server) threadRoutes(app, api *gin.RouterGroup) {
	app.GET("/threads/:id", s.threadPage)
	api.GET("/threads/:id", s.apiThread)
	api.GET("/threads/:id/turns", s.apiTurns)
	api.GET("/threads/:id/markdown", s.threadMarkdown)
	api.GET("/threads/:id/turns/:turn_id/content", s.turnContent)
	api.GET("/threads/:id/turns/:turn_id/attributes", s.turnAttributes)
	api.GET("/threads/:id/turns/:turn_id/markdown", s.turnMarkdown)
	app.GET("/threads/:id/turns/:turn_id/full", s.turnFull)
	app.GET("/threads/:id/live", s.threadLive)
	s.notesRoutes(api)
}

// turnWindow is how many turns, the newest that pass the filters, a page
// shows at first, and how many more each "earlier" step adds.
const turnWindow = 1000

// maxTurnWindow bounds the window a request may ask for.
const maxTurnWindow = 100_000

// maxQueryRunes bounds a search.
const maxQueryRunes = 1000

// filterForm is the filter bar as the request filled it, so that the
// page shows what it filters by and links keep it.
type filterForm struct {
	Phases  []string // phase keys asked for; none means all
	Role    string
	Speaker string
	Session string
	Agent   string // "", main or a sub-agent
	Tool    string
	From    string
	To      string
	Q       string
	Starred bool
	// Internal shows the turns kept for the audit trail only (internal=1).
	Internal bool
	Limit    int
	View     string // viewPhase or viewTimeline
}

// parseThreadQuery reads the filters of a thread page or its turns API.
// An unusable value is a *ParamError naming its parameter.
func parseThreadQuery(v url.Values, window int, now time.Time) (store.TurnFilter, filterForm, error) {
	form := filterForm{
		Role:    strings.TrimSpace(v.Get("role")),
		Speaker: strings.TrimSpace(v.Get("speaker")),
		Session: strings.TrimSpace(v.Get("session")),
		Agent:   strings.TrimSpace(v.Get("agent")),
		Tool:    strings.TrimSpace(v.Get("tool")),
		From:    strings.TrimSpace(v.Get("from")),
		To:      strings.TrimSpace(v.Get("to")),
		Q:       strings.TrimSpace(v.Get("q")),
	}
	switch view := strings.TrimSpace(v.Get("view")); view {
	case "", viewPhase:
		form.View = viewPhase
	case viewTimeline:
		form.View = viewTimeline
	default:
		return store.TurnFilter{}, filterForm{}, page.BadParam("view", "%q is neither phase nor timeline", view)
	}
	f := store.TurnFilter{Role: form.Role, Speaker: form.Speaker, Session: form.Session, Tool: form.Tool, Query: form.Q}
	for _, p := range v["phase"] {
		key := page.PhaseKey(p)
		if !slices.Contains(form.Phases, key) {
			form.Phases = append(form.Phases, key)
		}
	}
	f.Phases = form.Phases
	switch strings.ToLower(form.Agent) {
	case "", "all":
		form.Agent = ""
	case store.AgentMain:
		form.Agent, f.Agent = store.AgentMain, store.AgentMain
	default:
		f.Agent = form.Agent
	}
	var err error
	if form.Starred, err = parseSwitch("starred", v.Get("starred")); err != nil {
		return store.TurnFilter{}, filterForm{}, err
	}
	if form.Internal, err = parseSwitch("internal", v.Get("internal")); err != nil {
		return store.TurnFilter{}, filterForm{}, err
	}
	f.Starred, f.HideInternal = form.Starred, !form.Internal
	if n := utf8.RuneCountInString(form.Q); n > maxQueryRunes {
		return store.TurnFilter{}, filterForm{}, page.BadParam("q", "%d characters, at most %d", n, maxQueryRunes)
	}
	if f.FromNS, f.ToNS, err = page.TimeRange(form.From, form.To, now); err != nil {
		return store.TurnFilter{}, filterForm{}, err
	}
	if form.Limit, err = parseLimit("limit", v.Get("limit"), window, maxTurnWindow); err != nil {
		return store.TurnFilter{}, filterForm{}, err
	}
	return f, form, nil
}

// threadTurns is what the page and the turns API show of a thread.
type threadTurns struct {
	thread store.Thread
	form   filterForm
	turns  []store.Turn
	total  int // turns that pass the filters
}

// loadTurns reads the thread of the request and the newest turns its
// filters let through, at most its limit parameter, else window; of each
// at most contentBytes of content.
func (s *Server) loadTurns(c *gin.Context, window, contentBytes int) (threadTurns, error) {
	f, form, err := parseThreadQuery(c.Request.URL.Query(), window, time.Now())
	if err != nil {
		return threadTurns{}, err
	}
	return s.readTurns(c.Request.Context(), c.Param("id"), f, form, contentBytes)
}

// readTurns reads thread id and the newest turns f lets through, at most
// form.Limit, side by side, and how many pass f: counted only when the
// turns fill the window, else they are all of them.
func (s *Server) readTurns(ctx context.Context, id string, f store.TurnFilter, form filterForm, contentBytes int) (threadTurns, error) {
	tt := threadTurns{form: form}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { tt.thread, err = s.store.Thread(gctx, id); return err })
	g.Go(func() (err error) {
		if tt.turns, err = s.store.Turns(gctx, id, f, form.Limit, contentBytes); err != nil || len(tt.turns) < form.Limit {
			return err
		}
		tt.total, err = s.store.CountTurns(gctx, id, f)
		return err
	})
	if err := g.Wait(); err != nil {
		return threadTurns{}, err
	}
	// A turn stored after the count was read is on the page.
	tt.total = max(tt.total, len(tt.turns))
	return tt, nil
}

// loadThreadView reads what the thread page and its JSON twin show: the
// window of turns and, side by side with it (not one round trip after
// another), what the filter bar and header show beyond them. The page
// reads of each prompt only what it shows, its new messages.
func (s *Server) loadThreadView(c *gin.Context, page bool) (threadView, threadTurns, error) {
	f, form, err := parseThreadQuery(c.Request.URL.Query(), turnWindow, time.Now())
	if err != nil {
		return threadView{}, threadTurns{}, err
	}
	f.LeaveHistory = page
	id := c.Param("id")
	var (
		tt     threadTurns
		tc     threadContext
		g, ctx = errgroup.WithContext(c.Request.Context())
	)
	g.Go(func() (err error) {
		tt, err = s.readTurns(ctx, id, f, form, contentBytes(page))
		return err
	})
	s.readThreadContext(ctx, g, id, form.Internal, &tc)
	if err := g.Wait(); err != nil {
		return threadView{}, threadTurns{}, err
	}
	v := newThreadView(tt.thread, tt.turns, tt.form.Q)
	v.Filter, v.Total, v.View = tt.form, tt.total, tt.form.View
	v.Facets, v.Costs, v.Session = tc.facets, tc.costs, tc.session
	for _, pc := range tc.counts {
		v.Chips = append(v.Chips, phaseChip{PhaseCount: pc, On: len(form.Phases) == 0 || slices.Contains(form.Phases, pc.Key)})
	}
	for _, id := range tc.traces {
		v.Traces = append(v.Traces, traceLink{ID: id, URL: traceURL(id)})
	}
	return v, tt, nil
}

// pageContentBytes is how much of a turn a thread page reads: a card
// shows only its start (previewRunes), and a message cut short shows the
// text of what was read.
const pageContentBytes = 16 << 10

// contentBytes is how much of each turn a thread page or its JSON twin
// reads.
func contentBytes(page bool) int {
	if page {
		return pageContentBytes
	}
	return store.PageContentBytes
}

// threadPage renders one thread grouped by phase and round.
func (s *Server) threadPage(c *gin.Context) {
	id := c.Param("id")
	v, tt, err := s.loadThreadView(c, true)
	if errors.Is(err, store.ErrNotFound) {
		s.html(c, http.StatusNotFound, "notfound.html", "No thread has the id "+id+".")
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	if v.Earlier = min(v.Hidden(), turnWindow, maxTurnWindow-tt.form.Limit); v.Earlier > 0 {
		query := c.Request.URL.Query()
		query.Set("limit", strconv.Itoa(tt.form.Limit+v.Earlier))
		v.EarlierURL = threadURL(id) + "?" + query.Encode()
	}
	v.MarkdownURL = apiThreadURL(id) + "/markdown"
	v.ExportURL = apiThreadURL(id) + "/export"
	if q := c.Request.URL.Query().Encode(); q != "" {
		v.MarkdownURL += "?" + q
	}
	v.PhaseURL, v.TimelineURL = viewURL(id, c.Request.URL.Query(), viewPhase), viewURL(id, c.Request.URL.Query(), viewTimeline)
	v.Live = v.Running > 0 || time.Since(tt.thread.LastUpdate) < liveAfter
	s.html(c, http.StatusOK, "thread.html", v)
}

// threadContext is what the filter bar and header show beyond the turns:
// phase counts, the values to filter by, cost by phase, the traces, the
// provider session.
type threadContext struct {
	counts  []store.PhaseCount
	facets  store.Facets
	costs   []store.PhaseTotal
	traces  []string
	session string
}

// readThreadContext starts in g the reads of thread id's context, into tc:
// independent reads, side by side.
func (s *Server) readThreadContext(ctx context.Context, g *errgroup.Group, id string, internal bool, tc *threadContext) {
	g.Go(func() (err error) { tc.counts, err = s.store.PhaseCounts(ctx, id, internal); return err })
	g.Go(func() (err error) { tc.facets, err = s.store.Facets(ctx, id); return err })
	g.Go(func() (err error) { tc.costs, err = s.store.PhaseTotals(ctx, id); return err })
	g.Go(func() (err error) { tc.traces, err = s.store.Traces(ctx, id); return err })
	g.Go(func() (err error) { tc.session, err = s.store.CurrentSession(ctx, id, ""); return err })
}

// apiThreadURL is the path of a thread under /api/.
func apiThreadURL(id string) string { return "/api/threads/" + url.PathEscape(id) }

// turnsResponse is the whole thread as GET /api/threads/:id/turns answers
// it: the thread, and the newest limit turns that pass the filters, in the
// order they were said, with their notes. Total counts the turns that pass
// the filters; hidden = total - len(turns) are older than the window.
type turnsResponse struct {
	ThreadID string       `json:"thread_id"`
	Thread   store.Thread `json:"thread"`
	Turns    []store.Turn `json:"turns"`
	Total    int          `json:"total"`
	Hidden   int          `json:"hidden"`
	Limit    int          `json:"limit"`
}

// apiTurns answers GET /api/threads/:id/turns with the page's filters
// (phase, role, speaker, session, agent, tool, from, to, starred, internal,
// q) and limit. A
// turn's content beyond pageContentBytes is cut (content_cut).
func (s *Server) apiTurns(c *gin.Context) {
	tt, err := s.loadTurns(c, turnWindow, store.PageContentBytes)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, tt.response())
}

func (tt threadTurns) response() turnsResponse {
	return turnsResponse{
		ThreadID: tt.thread.ID, Thread: tt.thread, Turns: tt.turns,
		Total: tt.total, Hidden: tt.total - len(tt.turns), Limit: tt.form.Limit,
	}
}

// threadResponse is the thread page as GET /api/threads/:id answers it:
// its turns as /api/threads/:id/turns gives them, and what the page shows
// beside them.
type threadResponse struct {
	turnsResponse
	Phases      []store.PhaseCount `json:"phases"` // every phase of the thread, with its calls
	Facets      store.Facets       `json:"facets"`
	CostByPhase []store.PhaseTotal `json:"cost_by_phase"`
	Traces      []string           `json:"traces"`
	Session     string             `json:"current_session"` // the provider session a resumed run continues
	Running     int                `json:"running"`
	Interrupted int                `json:"interrupted"`
	Errors      int                `json:"errors"`  // failed calls, not retried
	Retried     int                `json:"retried"` // failed calls that were retried
}

// apiThread answers GET /api/threads/:id, the thread page's JSON twin,
// with the page's filters and limit.
func (s *Server) apiThread(c *gin.Context) {
	v, tt, err := s.loadThreadView(c, false)
	if err != nil {
		s.apiError(c, err)
		return
	}
	res := threadResponse{
		turnsResponse: tt.response(),
		Phases:        []store.PhaseCount{}, Facets: v.Facets, CostByPhase: v.Costs, Traces: []string{},
		Session: v.Session, Running: v.Running, Interrupted: v.Interrupted, Errors: v.Errors, Retried: v.Retried,
	}
	for _, chip := range v.Chips {
		res.Phases = append(res.Phases, chip.PhaseCount)
	}
	for _, tr := range v.Traces {
		res.Traces = append(res.Traces, tr.ID)
	}
	s.writeJSON(c, http.StatusOK, res)
}

// threadMarkdown answers GET /api/threads/:id/markdown: all the turns the
// filters let through (not only the page's window; at most limit when
// given), whole, as markdown.
func (s *Server) threadMarkdown(c *gin.Context) {
	tt, err := s.loadTurns(c, maxTurnWindow, store.AllContent)
	if err != nil {
		s.apiError(c, err)
		return
	}
	c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(threadMarkdown(tt.thread, tt.turns)))
}

// turnMarkdown answers GET /api/threads/:id/turns/:turn_id/markdown: one
// whole turn as markdown.
func (s *Server) turnMarkdown(c *gin.Context) {
	ctx := c.Request.Context()
	turns, err := s.store.Turns(ctx, c.Param("id"), store.TurnFilter{TurnID: c.Param("turn_id")}, 1, store.AllContent)
	if err == nil && len(turns) == 0 {
		err = store.ErrTurnNotFound
	}
	if err != nil {
		s.apiError(c, err)
		return
	}
	c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(turnMarkdown(turns[0])))
}

// turnContent answers GET /api/threads/:id/turns/:turn_id/content with the
// whole content of a turn that the page and the turns API cut:
// {"turn_id", "content"}.
func (s *Server) turnContent(c *gin.Context) {
	turnID := c.Param("turn_id")
	content, err := s.store.TurnContent(c.Request.Context(), c.Param("id"), turnID)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		TurnID  string `json:"turn_id"`
		Content string `json:"content"`
	}{turnID, content})
}

// turnAttributes answers GET /api/threads/:id/turns/:turn_id/attributes with
// every attribute of a turn, which the page and the turns API cap:
// {"turn_id", "attributes"}.
func (s *Server) turnAttributes(c *gin.Context) {
	turnID := c.Param("turn_id")
	attrs, err := s.store.TurnAttributes(c.Request.Context(), c.Param("id"), turnID)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		TurnID     string            `json:"turn_id"`
		Attributes map[string]string `json:"attributes"`
	}{turnID, attrs})
}
