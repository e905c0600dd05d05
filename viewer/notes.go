package viewer

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// maxNoteBody bounds the body of a note change: a memo of maxMemoRunes
// characters of up to 4 bytes each, JSON-escaped, fits.
const maxNoteBody = 256 << 10

// notesRoutes lets the user star a turn and write a memo on it.
func (s *Server) notesRoutes(api *gin.RouterGroup) {
	api.PUT("/threads/:id/turns/:turn_id/note", s.PutNote)
}

// PutNote answers PUT /api/threads/:id/turns/:turn_id/note, whose JSON body
// {"starred": bool, "memo": "..."} changes the fields it holds and keeps
// the others, with the note as stored.
func (s *Server) PutNote(c *gin.Context) {
	var ch store.NoteChange
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxNoteBody))
	if err := dec.Decode(&ch); err != nil {
		s.apiError(c, page.BadParam("body", "not a JSON object {\"starred\": bool, \"memo\": string}: %v", err))
		return
	}
	if ch.Memo != nil {
		if n := utf8.RuneCountInString(*ch.Memo); n > store.MaxMemoRunes {
			s.apiError(c, page.BadParam("memo", "%d characters, at most %d", n, store.MaxMemoRunes))
			return
		}
	}
	n, err := s.store.PutNote(c.Request.Context(), c.Param("id"), c.Param("turn_id"), ch)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, n)
}
