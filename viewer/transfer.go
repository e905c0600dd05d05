package viewer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
	"github.com/convtrace/convtrace/store/transfer"
)

// maxImportBody bounds an import's body, and the export it decompresses
// to: a larger export is for convtrace import, which streams it from a
// file.
const maxImportBody = 64 << 20

// importWait is how long an import waits for room in the process's import
// memory budget and for the database's import lock before it is answered
// 503; importRetryAfter is when it is asked to try again.
const (
	importWait       = 10 * time.Second
	importRetryAfter = "10"
)

// transferRoutes serves a thread's and a project's export and the import
// of an export.
func (s *Server) transferRoutes(api *gin.RouterGroup) {
	api.GET("/threads/:id/export", func(c *gin.Context) {
		s.export(c, store.ExportFilter{ThreadID: c.Param("id")}, c.Param("id"))
	})
	api.GET("/projects/:project/export", func(c *gin.Context) {
		s.export(c, store.ExportFilter{Project: c.Param("project")}, "project-"+c.Param("project"))
	})
	api.GET("/tasks/:attr/:value", s.exportTask)
	api.POST("/import", s.importExport)
}

// exportTask answers GET /api/tasks/:attr/:value with every thread whose
// thread attribute attr has value (a task's or a card's threads), every
// turn of each, as one export file; 404 when no thread has it.
func (s *Server) exportTask(c *gin.Context) {
	attr, value := c.Param("attr"), c.Param("value")
	ids, err := s.store.ThreadIDs(c.Request.Context(), store.ThreadFilter{Attrs: map[string]string{attr: value}})
	if err != nil {
		s.apiError(c, err)
		return
	}
	if len(ids) == 0 {
		c.AbortWithStatusJSON(http.StatusNotFound, apiErrorBody{fmt.Sprintf("no thread has the attribute %s=%s", attr, value)})
		return
	}
	s.export(c, store.ExportFilter{ThreadIDs: ids}, attr+"-"+value)
}

// export answers with the threads f selects as an export file
// (transfer.Export) named after id, JSON or, with ?format=jsonl, JSON
// lines.
func (s *Server) export(c *gin.Context, f store.ExportFilter, id string) {
	name := c.DefaultQuery("format", string(transfer.JSON))
	format, err := transfer.ParseFormat(name)
	if err != nil {
		s.apiError(c, page.BadParam("format", "%q is not json or jsonl", name))
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", map[transfer.Format]string{transfer.JSON: "application/json", transfer.JSONL: "application/x-ndjson"}[format])
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, exportName(id), format))
	_, err = transfer.Export(c.Request.Context(), s.db, c.Writer, f, format)
	if err == nil {
		return
	}
	if !c.Writer.Written() {
		h.Del("Content-Disposition")
		s.apiError(c, err)
		return
	}
	// The answer has begun: all that is left is to cut it short.
	s.log.ErrorContext(c.Request.Context(), "viewer: export failed", "of", id, "err", err)
	c.Abort()
}

// exportName is a file name for a thread's export: its id with anything
// but letters, digits, '-', '_' and '.' replaced.
func exportName(id string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, id)
	if len(name) > 100 {
		name = name[:100]
	}
	return "convtrace-" + strings.TrimLeft(name, ".")
}

// importExport answers POST /api/import, an export (JSON or JSON lines,
// zstd-compressed or not, sent as application/json) with transfer.Result.
// Before anything is stored: 400 for an export refused whole, 413 past
// maxImportBody (sent or decompressed). 503 with Retry-After when the
// imports' memory budget or another import's lock stays taken importWait.
func (s *Server) importExport(c *gin.Context) {
	conn, ok := s.db.(transfer.Conn)
	if !ok {
		s.writeJSON(c, http.StatusNotImplemented, apiErrorBody{"this viewer's storage cannot import"})
		return
	}
	res, err := transfer.ImportReader(c.Request.Context(), conn, http.MaxBytesReader(c.Writer, c.Request.Body, maxImportBody),
		c.Query("name"), transfer.WithMaxSize(maxImportBody), transfer.WithWait(importWait))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || errors.Is(err, transfer.ErrTooLarge):
		s.writeJSON(c, http.StatusRequestEntityTooLarge, apiErrorBody{
			fmt.Sprintf("the export is larger than %d MiB: import it with convtrace import FILE", maxImportBody>>20)})
	case errors.Is(err, transfer.ErrBusy):
		c.Header("Retry-After", importRetryAfter)
		s.writeJSON(c, http.StatusServiceUnavailable, apiErrorBody{err.Error() + ": retry later"})
	case errors.Is(err, transfer.ErrInvalid):
		s.writeJSON(c, http.StatusBadRequest, apiErrorBody{err.Error()})
	case err != nil:
		s.apiError(c, err)
	default:
		s.writeJSON(c, http.StatusOK, res)
	}
}
