package viewer

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
)

// contextRoutes serves a thread's recent context in chat format.
func (s *Server) contextRoutes(api *gin.RouterGroup) {
	api.GET("/threads/:id/context", s.apiContext)
}

// Bounds of GET /api/threads/:id/context?limit=.
const (
	defaultContextLimit = 10
	maxContextLimit     = 200
)

// apiContext answers GET /api/threads/:id/context?limit=N (default 10, at
// most 200): {"thread_id", "messages": [...]}, the thread's last N messages
// oldest first, as RecentContext reads them.
func (s *Server) apiContext(c *gin.Context) {
	limit, err := parseLimit("limit", c.Query("limit"), defaultContextLimit, maxContextLimit)
	if err != nil {
		s.apiError(c, err)
		return
	}
	id := c.Param("id")
	msgs, err := s.store.RecentContext(c.Request.Context(), id, limit)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		ThreadID string                 `json:"thread_id"`
		Messages []store.ContextMessage `json:"messages"`
	}{id, msgs})
}
