package viewer

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// maxTitleRunes is how long a title a user gives may be.
const maxTitleRunes = 200

// maxChangeBytes bounds a change's body: a title of 200 runes and a flag
// need far less.
const maxChangeBytes = 16 << 10

// patchThread answers PATCH /api/threads/:id with {"title": "..."} and/or
// {"archived": true|false}: it renames, archives or restores the thread
// and answers the thread as it now is.
func (s *Server) patchThread(c *gin.Context) {
	ctx, id := c.Request.Context(), c.Param("id")
	ch, err := decodeThreadChange(http.MaxBytesReader(c.Writer, c.Request.Body, maxChangeBytes))
	if err != nil {
		s.apiError(c, err)
		return
	}
	found, err := s.store.ThreadExists(ctx, id)
	if err == nil && !found {
		err = store.ErrNotFound
	}
	if err != nil {
		s.apiError(c, err)
		return
	}
	if err := s.store.ChangeThread(ctx, id, ch, uint64(time.Now().UnixNano())); err != nil {
		s.apiError(c, err)
		return
	}
	th, err := s.store.Thread(ctx, id)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, th)
}

// decodeThreadChange reads one JSON object with a title, archived or both
// and nothing else. The title is put on one line and trimmed.
func decodeThreadChange(body io.Reader) (store.ThreadChange, error) {
	var in struct {
		Title    *string `json:"title"`
		Archived *bool   `json:"archived"`
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return store.ThreadChange{}, bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return store.ThreadChange{}, page.BadParam("body", "send one JSON object and nothing after it")
	}
	if in.Title == nil && in.Archived == nil {
		return store.ThreadChange{}, page.BadParam("body", `nothing to change: send {"title": "..."} and/or {"archived": true|false}`)
	}
	if in.Title != nil {
		t := strings.Join(strings.Fields(*in.Title), " ")
		if n := utf8.RuneCountInString(t); n > maxTitleRunes {
			return store.ThreadChange{}, page.BadParam("title", "%d characters, at most %d", n, maxTitleRunes)
		}
		in.Title = &t
	}
	return store.ThreadChange{Title: in.Title, Archived: in.Archived}, nil
}

// bodyError names what is wrong with a change's JSON body.
func bodyError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		want := "a string"
		if typeErr.Field == "archived" {
			want = "true or false"
		}
		return page.BadParam(typeErr.Field, "want %s, got a JSON %s", want, typeErr.Value)
	case errors.As(err, &maxErr):
		return page.BadParam("body", "larger than %d bytes", maxErr.Limit)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return page.BadParam("body", "%s: only title and archived can change", strings.TrimPrefix(err.Error(), "json: "))
	case errors.Is(err, io.EOF):
		return page.BadParam("body", "empty: send a JSON object")
	}
	return page.BadParam("body", "not a JSON object: %v", err)
}
