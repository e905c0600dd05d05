package viewer

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// traceRoutes serves the trace pages and their JSON twins.
func (s *Server) traceRoutes(app, api *gin.RouterGroup) {
	app.GET("/traces/:trace_id", s.tracePage)
	api.GET("/traces/:trace_id", s.apiTrace)
	api.GET("/traces/:trace_id/spans/:span_id/turns", s.apiSpanTurns)
	s.detailRoutes(app, api)
}

// SpanTurn is one turn of a span as the trace page lists it, with its
// content read as chat messages and the link to the turn in its thread.
type SpanTurn struct {
	store.SpanTurn
	// Messages is Content read as chat messages JSON, as far as it decodes
	// (the cut may end it mid-message); empty when Content is not such JSON.
	Messages []SpanMessage `json:"messages"`
	URL      string        `json:"url"` // the turn in its thread page
}

// spanTurns returns the turns of one span of a trace as the page lists
// them.
func (s *Server) spanTurns(ctx context.Context, traceID, spanID string) ([]SpanTurn, error) {
	rows, err := s.store.SpanTurns(ctx, traceID, spanID)
	if err != nil {
		return nil, err
	}
	turns := make([]SpanTurn, len(rows))
	for i, t := range rows {
		turns[i] = SpanTurn{SpanTurn: t, Messages: spanMessages(t.Content), URL: threadURL(t.ThreadID) + "#" + t.TurnID}
	}
	return turns, nil
}

// SpanMessage is one chat message of a turn's content.
type SpanMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// spanMessages reads the chat messages at the start of content.
func spanMessages(content string) []SpanMessage {
	msgs, _ := genai.Decode(content)
	out := make([]SpanMessage, len(msgs))
	for i, m := range msgs {
		out[i] = SpanMessage{Role: roleLabel(m), Text: m.Text()}
	}
	return out
}

// trace reads a trace and orders its spans; errTraceNotFound when it has
// neither span nor turn.
func (s *Server) trace(c *gin.Context) (Trace, error) {
	id := c.Param("trace_id")
	spans, calls, err := s.store.TraceRows(c.Request.Context(), id)
	if err != nil {
		return Trace{}, err
	}
	if len(spans) == 0 && len(calls) == 0 {
		return Trace{}, store.ErrTraceNotFound
	}
	return buildTrace(id, spans, calls), nil
}

// tracePage renders a trace's waterfall; ?span= opens that span's detail
// beside it (?all=1 with every attribute and event whole).
func (s *Server) tracePage(c *gin.Context) {
	t, err := s.trace(c)
	if errors.Is(err, store.ErrNotFound) {
		s.html(c, http.StatusNotFound, "notfound.html", "No trace has the id "+c.Param("trace_id")+".")
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	v := newTraceView(t)
	if id := c.Query("span"); id != "" {
		if t.span(id) == nil {
			s.pageError(c, page.BadParam("span", "%q is not a span of this trace", id))
			return
		}
		all, err := parseSwitch("all", c.Query("all"))
		if err != nil {
			s.pageError(c, err)
			return
		}
		d, err := s.spanDetail(c.Request.Context(), t, id, all)
		if err != nil {
			s.pageError(c, err)
			return
		}
		v.Detail = &d
	}
	s.html(c, http.StatusOK, "trace.html", v)
}

// apiTrace answers GET /api/traces/:trace_id with the Trace.
func (s *Server) apiTrace(c *gin.Context) {
	t, err := s.trace(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, t)
}

// apiSpanTurns answers GET /api/traces/:trace_id/spans/:span_id/turns:
// {"trace_id", "span_id", "turns": [...]}, what the trace page opens when a
// span is clicked. A span without turns has none; an unknown trace is 404.
func (s *Server) apiSpanTurns(c *gin.Context) {
	ctx, traceID, spanID := c.Request.Context(), c.Param("trace_id"), c.Param("span_id")
	turns, err := s.spanTurns(ctx, traceID, spanID)
	if err != nil {
		s.apiError(c, err)
		return
	}
	if len(turns) == 0 {
		// No turns: tell an unknown trace from a span that said nothing.
		found, err := s.store.TraceExists(ctx, traceID)
		if err == nil && !found {
			err = store.ErrTraceNotFound
		}
		if err != nil {
			s.apiError(c, err)
			return
		}
	}
	s.writeJSON(c, http.StatusOK, struct {
		TraceID string     `json:"trace_id"`
		SpanID  string     `json:"span_id"`
		Turns   []SpanTurn `json:"turns"`
	}{traceID, spanID, turns})
}
