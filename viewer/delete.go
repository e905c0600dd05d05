package viewer

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// deleteResponse is what DELETE /api/threads/:id answers: what it removed.
type deleteResponse struct {
	ThreadID string        `json:"thread_id"`
	Removed  store.Removal `json:"removed"`
}

// deleteThread answers DELETE /api/threads/:id, whose JSON body
// {"confirm": ID} must name the thread again: it removes the thread's
// turns, spans, notes, metadata and summaries, for good.
func (s *Server) deleteThread(c *gin.Context) {
	id := c.Param("id")
	var in struct {
		Confirm string `json:"confirm"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxChangeBytes))
	if err := dec.Decode(&in); err != nil || in.Confirm != id {
		s.apiError(c, page.BadParam("confirm", "send {\"confirm\": the thread's id} to delete it"))
		return
	}
	removed, err := s.store.DeleteThread(c.Request.Context(), id, nil)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.feed.publishDeleted(id)
	s.log.InfoContext(c.Request.Context(), "viewer: thread deleted", "thread", id, "turns", removed.Turns)
	s.writeJSON(c, http.StatusOK, deleteResponse{ThreadID: id, Removed: removed})
}
