package viewer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// notFound answers unknown routes: JSON under /api/, a page elsewhere.
func (s *Server) notFound(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		s.writeJSON(c, http.StatusNotFound, apiErrorBody{"not found"})
		return
	}
	s.html(c, http.StatusNotFound, "notfound.html", "There is no page here.")
}

type apiErrorBody struct {
	Error string `json:"error"`
}

// errEncodeBody is the answer when a value cannot be encoded as JSON.
var errEncodeBody = []byte(`{"error":"internal error: the answer could not be encoded as JSON"}`)

// writeJSON answers v as JSON with status, marshalling it first: a value
// JSON cannot encode (a NaN) then gets a 500 with a message, where gin's
// c.JSON would have sent the header and then an empty 200.
func (s *Server) writeJSON(c *gin.Context, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.ErrorContext(c.Request.Context(), "viewer: encode json", "path", c.Request.URL.Path, "err", err)
		status, body = http.StatusInternalServerError, errEncodeBody
	}
	c.Data(status, "application/json; charset=utf-8", body)
}

func (s *Server) apiError(c *gin.Context, err error) {
	var pe *page.ParamError
	if errors.As(err, &pe) {
		s.writeJSON(c, http.StatusBadRequest, apiErrorBody{pe.Error()})
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		s.writeJSON(c, http.StatusNotFound, apiErrorBody{err.Error()})
		return
	}
	s.log.ErrorContext(c.Request.Context(), "viewer: query failed", "path", c.Request.URL.Path, "err", err)
	s.writeJSON(c, http.StatusInternalServerError, apiErrorBody{"internal error"})
}

func (s *Server) pageError(c *gin.Context, err error) {
	var pe *page.ParamError
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
