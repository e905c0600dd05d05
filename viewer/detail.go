package viewer

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// The detail pane shows one span: a provider call, a tool run or any other
// span, with its whole input and output, its attributes and events, its
// timing and its usage. One fragment serves every page that opens it
// (detail.js); the trace page also renders it in place for ?span=.

// detailRoutes serves the pane's fragment and its JSON twin.
func (s *Server) detailRoutes(app, api *gin.RouterGroup) {
	app.GET("/traces/:trace_id/spans/:span_id/detail", s.detailFragment)
	api.GET("/traces/:trace_id/spans/:span_id", s.apiSpanDetail)
}

// detailTurnLimit caps the turns read of one span: a call has a prompt and
// an answer, a tool run a call and a result.
const detailTurnLimit = 200

// detailContentBytes is how much of a turn's content the pane reads: all
// of any turn a thread page cuts at store.PageContentBytes, up to a point;
// beyond it the pane links the whole content.
const detailContentBytes = 1 << 20

// maxIDBytes bounds a trace or span id in a URL: far above any id a
// tracer or an importer writes.
const maxIDBytes = 512

// SpanDetail is one span as the detail pane shows it: the span as the
// waterfall draws it, what the spans table adds (attributes, resource,
// events) and its turns, read whole.
type SpanDetail struct {
	TraceID string `json:"trace_id"`
	TraceSpan
	store.SpanAttributes
	Events []SpanEvent `json:"events"`
	// ParentName is the parent span's name when the trace has it;
	// ParentURL is then its detail.
	ParentName string    `json:"parent_name"`
	ParentURL  string    `json:"parent_url"`
	Start      time.Time `json:"start"`
	OffsetNS   uint64    `json:"offset_ns"` // since the trace started
	Usage      SpanUsage `json:"usage"`
	// Input are the turns that went into the span (prompt, system, tool
	// call), Output what came out (answer, error, tool result), each in
	// the order said; TurnsShown counts them, of the span's Turns.
	Input      []DetailTurn `json:"input"`
	Output     []DetailTurn `json:"output"`
	TurnsShown int          `json:"turns_shown"`
	// Rebuilt are the content attributes the span's row left out, its
	// turns holding them (detail_rebuilt.go).
	Rebuilt []RebuiltAttr `json:"rebuilt_attributes"`
	// Links: the span's first turn in its thread page, the turn it
	// answers there, the trace page with the span open, this detail as
	// JSON, and (when a list or value was cut) all of it as fragment,
	// trace page and JSON.
	ThreadURL     string `json:"thread_url"`
	ParentTurnURL string `json:"parent_turn_url"`
	TraceURL      string `json:"trace_url"`
	APIURL        string `json:"api_url"`
	AllURL        string `json:"all_url"`
	AllPageURL    string `json:"all_page_url"`
	AllAPIURL     string `json:"all_api_url"`
}

// SpanEvent is one event of a span: its name, and when, as an offset from
// the span's start (0 for an event before it).
type SpanEvent struct {
	Name     string `json:"name"`
	TimeNS   uint64 `json:"time_ns"`
	OffsetNS uint64 `json:"offset_ns"`
}

// SpanUsage is what a span's turns add to the tokens and cost its
// TraceSpan has: the cache and reasoning counts, nil when no turn
// reported them, and where the cost came from.
type SpanUsage struct {
	CacheRead  *uint64 `json:"tokens_cache_read"`
	CacheWrite *uint64 `json:"tokens_cache_write"`
	Reasoning  *uint64 `json:"tokens_reasoning"`
	// CostSource is the cost's source (schema.CostProvided, CostPriced,
	// CostUnknown, CostNone), "" when no turn of the span carries usage.
	CostSource string `json:"cost_source"`
}

// DetailTurn is one turn of a span, its content read as the pane shows
// it.
type DetailTurn struct {
	store.Turn
	// Earlier are the messages of a prompt's history (collapsed), Messages
	// the rest; Text is content that is not chat messages, JSON indented,
	// with its multi-line fields as Blocks.
	Earlier  []DetailMessage `json:"earlier"`
	Messages []DetailMessage `json:"messages"`
	Text     string          `json:"text"`
	Blocks   []DetailBlock   `json:"blocks"`
	URL      string          `json:"url"` // the turn in its thread page
	// ContentURL has all of a content cut at detailContentBytes, and
	// AttributesURL all of the turn's attributes when they were capped;
	// "" when nothing was cut.
	ContentURL    string `json:"content_url"`
	AttributesURL string `json:"attributes_url"`
}

// inputRoles are the roles of what goes into a span; any other is output.
var inputRoles = map[string]bool{schema.RolePrompt: true, schema.RoleSystem: true, schema.RoleToolCall: true}

// detailURL is the path of a span's detail fragment, what data-detail
// holds.
func detailURL(traceID, spanID string) string {
	return spanPath(traceID, spanID) + "/detail"
}

func spanPath(traceID, spanID string) string {
	return traceURL(traceID) + "/spans/" + url.PathEscape(spanID)
}

// spanPageURL is the trace page with the span open.
func spanPageURL(traceID, spanID string) string {
	return traceURL(traceID) + "?span=" + url.QueryEscape(spanID)
}

// checkID refuses an id no span or trace has: empty, over maxIDBytes, not
// UTF-8, or holding control characters.
func checkID(param, id string) error {
	switch {
	case id == "":
		return page.BadParam(param, "empty")
	case len(id) > maxIDBytes:
		return page.BadParam(param, "longer than %d bytes", maxIDBytes)
	case !utf8.ValidString(id):
		return page.BadParam(param, "not UTF-8")
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return page.BadParam(param, "%q holds a control character", id)
		}
	}
	return nil
}

// readDetail reads the span of the request's URL: its trace, then the
// span in it, everything capped unless ?all=1.
func (s *Server) readDetail(c *gin.Context) (SpanDetail, error) {
	traceID, spanID := c.Param("trace_id"), c.Param("span_id")
	if err := checkID("trace_id", traceID); err != nil {
		return SpanDetail{}, err
	}
	if err := checkID("span_id", spanID); err != nil {
		return SpanDetail{}, err
	}
	all, err := parseSwitch("all", c.Query("all"))
	if err != nil {
		return SpanDetail{}, err
	}
	t, err := s.trace(c)
	if err != nil {
		return SpanDetail{}, err
	}
	return s.spanDetail(c.Request.Context(), t, spanID, all)
}

// spanDetail reads the detail of one span of t: its attributes and its
// turns, side by side.
func (s *Server) spanDetail(ctx context.Context, t Trace, spanID string, all bool) (SpanDetail, error) {
	sp := t.span(spanID)
	if sp == nil {
		return SpanDetail{}, store.SpanNotFound(t.TraceID, spanID)
	}
	d := SpanDetail{
		TraceID: t.TraceID, TraceSpan: *sp, Events: []SpanEvent{}, Input: []DetailTurn{}, Output: []DetailTurn{}, Rebuilt: []RebuiltAttr{},
		Start: time.Unix(0, int64(sp.StartNS)).UTC(), OffsetNS: sp.StartNS - t.StartNS,
		TraceURL: spanPageURL(t.TraceID, spanID), APIURL: "/api" + spanPath(t.TraceID, spanID),
	}
	if p := t.span(sp.ParentSpanID); p != nil && p.SpanID != sp.SpanID {
		d.ParentName, d.ParentURL = p.Name, detailURL(t.TraceID, p.SpanID)
	}
	var (
		found bool
		turns []store.Turn
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		d.SpanAttributes, found, err = s.store.ReadSpanAttributes(gctx, t.TraceID, spanID, all)
		return err
	})
	if sp.Turns > 0 {
		g.Go(func() (err error) {
			f := store.TurnFilter{SpanID: spanID}
			turns, err = s.store.Turns(gctx, sp.ThreadID, f, detailTurnLimit, detailContentBytes)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return SpanDetail{}, err
	}
	if !found { // a call drawn from its turns: no span row yet
		d.Attributes, d.Resource = []schema.Attr{}, []schema.Attr{}
	}
	for i, name := range d.EventNames {
		ev := SpanEvent{Name: name, TimeNS: d.EventTimesNS[i]}
		if ev.TimeNS > sp.StartNS {
			ev.OffsetNS = ev.TimeNS - sp.StartNS
		}
		d.Events = append(d.Events, ev)
	}
	d.addTurns(turns)
	rebuiltCut := d.ContentInTurns && d.rebuildContent(all)
	if d.Capped() || rebuiltCut {
		d.AllURL = detailURL(t.TraceID, spanID) + "?all=1"
		d.AllPageURL = d.TraceURL + "&all=1"
		d.AllAPIURL = d.APIURL + "?all=1"
	}
	if d.ThreadURL == "" && d.ThreadID != "" && slices.Contains(t.ThreadIDs, d.ThreadID) {
		d.ThreadURL = threadURL(d.ThreadID)
	}
	return d, nil
}

// addTurns files the span's turns (of its trace: a span id is the
// trace's) as input or output and adds up their usage.
func (d *SpanDetail) addTurns(turns []store.Turn) {
	for _, t := range turns {
		if t.TraceID != d.TraceID {
			continue
		}
		dt := DetailTurn{Turn: t, URL: threadURL(t.ThreadID) + "#" + t.TurnID}
		dt.Earlier, dt.Messages, dt.Text, dt.Blocks = turnBody(t.Content, len(t.History))
		if t.ContentCut {
			dt.ContentURL = apiThreadURL(t.ThreadID) + "/turns/" + url.PathEscape(t.TurnID) + "/content"
		}
		if t.AttributesTotal > len(t.Attributes) {
			dt.AttributesURL = apiThreadURL(t.ThreadID) + "/turns/" + url.PathEscape(t.TurnID) + "/attributes"
		}
		if d.ThreadURL == "" {
			d.ThreadURL = dt.URL
		}
		if t.ParentTurnID != "" && d.ParentTurnURL == "" {
			d.ParentTurnURL = threadURL(t.ThreadID) + "#" + t.ParentTurnID
		}
		u := &d.Usage
		u.CacheRead = store.AddKnown(u.CacheRead, widen(t.TokensCacheRead))
		u.CacheWrite = store.AddKnown(u.CacheWrite, widen(t.TokensCacheWrite))
		u.Reasoning = store.AddKnown(u.Reasoning, widen(t.TokensReasoning))
		if u.CostSource == "" {
			u.CostSource = t.CostSource
		}
		if inputRoles[t.Role] {
			d.Input = append(d.Input, dt)
		} else {
			d.Output = append(d.Output, dt)
		}
		d.TurnsShown++
	}
}

// detailFragment answers GET /traces/:trace_id/spans/:span_id/detail with
// the pane's HTML fragment; ?all=1 lists every attribute and event whole.
func (s *Server) detailFragment(c *gin.Context) {
	d, err := s.readDetail(c)
	if err != nil {
		s.fragmentError(c, err)
		return
	}
	s.html(c, http.StatusOK, "detail.html", d)
}

// apiSpanDetail answers GET /api/traces/:trace_id/spans/:span_id with the
// SpanDetail, the fragment's JSON twin.
func (s *Server) apiSpanDetail(c *gin.Context) {
	d, err := s.readDetail(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, d)
}

// fragmentError answers a fragment request that failed with a fragment
// saying why: 400 for a bad parameter, 404 for a missing trace or span,
// else 500.
func (s *Server) fragmentError(c *gin.Context, err error) {
	var pe *page.ParamError
	switch {
	case errors.As(err, &pe):
		s.html(c, http.StatusBadRequest, "detail_error", pe.Error())
	case errors.Is(err, store.ErrNotFound):
		s.html(c, http.StatusNotFound, "detail_error", err.Error())
	default:
		s.log.ErrorContext(c.Request.Context(), "viewer: query failed", "path", c.Request.URL.Path, "err", err)
		s.html(c, http.StatusInternalServerError, "detail_error", "internal error")
	}
}

// costSourceNotes say where a cost came from, by schema cost source.
var costSourceNotes = map[string]string{
	schema.CostProvided: "given by the provider or the caller",
	schema.CostPriced:   "computed from the tokens and the price table",
	schema.CostUnknown:  "tokens known, model not in the price table",
	schema.CostNone:     "the call reported no usage",
}

// CostSourceNote says where the span's cost came from, "" when no turn
// carries usage.
func (u SpanUsage) CostSourceNote() string { return costSourceNotes[u.CostSource] }
