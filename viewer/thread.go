package viewer

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// threadRoutes serves one thread's page and its turns as JSON.
func (s *Server) threadRoutes(app, api *gin.RouterGroup) {
	app.GET("/threads/:id", s.threadPage)
	api.GET("/threads/:id/turns", s.apiTurns)
}

// threadPage renders one thread grouped by phase and round.
func (s *Server) threadPage(c *gin.Context) {
	ctx, id := c.Request.Context(), c.Param("id")
	th, err := s.store.thread(ctx, id)
	if errors.Is(err, errNotFound) {
		s.html(c, http.StatusNotFound, "notfound.html", "No thread has the id "+id+".")
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	turns, err := s.store.turns(ctx, id, TurnFilter{})
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "thread.html", newThreadView(th, turns))
}

// apiTurns answers GET /api/threads/:id/turns?phase=&role=:
// {"thread_id": id, "turns": [...]}, sorted by start time, then seq.
func (s *Server) apiTurns(c *gin.Context) {
	ctx, id := c.Request.Context(), c.Param("id")
	if _, err := s.store.thread(ctx, id); err != nil {
		s.apiError(c, err)
		return
	}
	turns, err := s.store.turns(ctx, id, TurnFilter{Phase: c.Query("phase"), Role: c.Query("role")})
	if err != nil {
		s.apiError(c, err)
		return
	}
	c.JSON(http.StatusOK, struct {
		ThreadID string `json:"thread_id"`
		Turns    []Turn `json:"turns"`
	}{id, turns})
}
