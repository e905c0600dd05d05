package viewer

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// contextRoutes serves a thread's recent context in chat format, and the
// reset that starts it anew.
func (s *Server) contextRoutes(api *gin.RouterGroup) {
	api.GET("/threads/:id/context", s.apiContext)
	api.POST("/threads/:id/reset", s.postReset)
}

// Bounds of GET /api/threads/:id/context?limit=&max_tokens=.
const (
	defaultContextLimit = 10
	maxContextLimit     = 200
	maxContextTokens    = 10_000_000
)

// contextAnswer is GET /api/threads/:id/context's answer.
type contextAnswer struct {
	ThreadID string                 `json:"thread_id"`
	Messages []store.ContextMessage `json:"messages"`
	// Tokens is the messages' estimated tokens, summed.
	Tokens int `json:"tokens"`
}

// apiContext answers GET /api/threads/:id/context?limit=N&max_tokens=T:
// the thread's last N messages (default 10, at most 200; with max_tokens
// and no limit, 200) since its last reset, oldest first, as RecentContext
// reads them, the newest whose estimated tokens fit in T when it is given.
func (s *Server) apiContext(c *gin.Context) {
	maxTokens, err := parseLimit("max_tokens", c.Query("max_tokens"), 0, maxContextTokens)
	if err != nil {
		s.apiError(c, err)
		return
	}
	def := defaultContextLimit
	if maxTokens > 0 {
		def = maxContextLimit
	}
	limit, err := parseLimit("limit", c.Query("limit"), def, maxContextLimit)
	if err != nil {
		s.apiError(c, err)
		return
	}
	id := c.Param("id")
	msgs, err := s.store.RecentContext(c.Request.Context(), id, limit, store.WithMaxTokens(maxTokens))
	if err != nil {
		s.apiError(c, err)
		return
	}
	out := contextAnswer{ThreadID: id, Messages: msgs}
	for _, m := range msgs {
		out.Tokens += m.Tokens
	}
	s.writeJSON(c, http.StatusOK, out)
}

// postReset answers POST /api/threads/:id/reset, whose body is {}: it
// marks the thread's recent context to start anew (store.ResetContext)
// and answers {"thread_id", "reset_at"}. Every turn stays stored and
// shown; the thread page shows the mark where it was made.
func (s *Server) postReset(c *gin.Context) {
	ctx, id := c.Request.Context(), c.Param("id")
	if err := decodeEmpty(http.MaxBytesReader(c.Writer, c.Request.Body, maxChangeBytes)); err != nil {
		s.apiError(c, err)
		return
	}
	at, err := s.store.ResetContext(ctx, id, time.Now())
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		ThreadID string    `json:"thread_id"`
		ResetAt  time.Time `json:"reset_at"`
	}{id, at})
}

// decodeEmpty reads one empty JSON object and nothing after it.
func decodeEmpty(body io.Reader) error {
	var in struct{}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok || err == io.EOF {
			return page.BadParam("body", `send {}`)
		}
		return page.BadParam("body", "send {}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return page.BadParam("body", "send one JSON object and nothing after it")
	}
	return nil
}
