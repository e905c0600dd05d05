package viewer

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// threadsPage renders the threads list, newest first.
func (s *Server) threadsPage(c *gin.Context) {
	threads, err := s.store.threads(c.Request.Context())
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "threads.html", threads)
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

// apiThreads answers GET /api/threads: {"threads": [...]}, the data of /.
func (s *Server) apiThreads(c *gin.Context) {
	threads, err := s.store.threads(c.Request.Context())
	if err != nil {
		s.apiError(c, err)
		return
	}
	c.JSON(http.StatusOK, struct {
		Threads []Thread `json:"threads"`
	}{threads})
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

// notFound answers unknown routes: JSON under /api/, a page elsewhere.
func (s *Server) notFound(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		c.JSON(http.StatusNotFound, apiErrorBody{"not found"})
		return
	}
	s.html(c, http.StatusNotFound, "notfound.html", "There is no page here.")
}

type apiErrorBody struct {
	Error string `json:"error"`
}

func (s *Server) apiError(c *gin.Context, err error) {
	if errors.Is(err, errNotFound) {
		c.JSON(http.StatusNotFound, apiErrorBody{err.Error()})
		return
	}
	s.log.ErrorContext(c.Request.Context(), "viewer: query failed", "path", c.Request.URL.Path, "err", err)
	c.JSON(http.StatusInternalServerError, apiErrorBody{"internal error"})
}

func (s *Server) pageError(c *gin.Context, err error) {
	s.log.ErrorContext(c.Request.Context(), "viewer: query failed", "path", c.Request.URL.Path, "err", err)
	s.html(c, http.StatusInternalServerError, "error.html", nil)
}

func (s *Server) html(c *gin.Context, status int, page string, data any) {
	body, err := s.pages.render(page, data)
	if err != nil {
		s.log.ErrorContext(c.Request.Context(), "viewer: render page", "page", page, "err", err)
		c.String(http.StatusInternalServerError, "internal error")
		return
	}
	c.Data(status, "text/html; charset=utf-8", body)
}
