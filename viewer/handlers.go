package viewer

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

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
	var pe *ParamError
	if errors.As(err, &pe) {
		c.JSON(http.StatusBadRequest, apiErrorBody{pe.Error()})
		return
	}
	if errors.Is(err, errNotFound) {
		c.JSON(http.StatusNotFound, apiErrorBody{err.Error()})
		return
	}
	s.log.ErrorContext(c.Request.Context(), "viewer: query failed", "path", c.Request.URL.Path, "err", err)
	c.JSON(http.StatusInternalServerError, apiErrorBody{"internal error"})
}

func (s *Server) pageError(c *gin.Context, err error) {
	var pe *ParamError
	if errors.As(err, &pe) {
		s.html(c, http.StatusBadRequest, "badrequest.html", pe.Error())
		return
	}
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
