package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// SSE writes a server-sent event stream, as the fake model providers
// answer streamed calls, flushing after each event so a client sees it at
// once.
type SSE struct {
	w http.ResponseWriter
	f http.Flusher
}

// NewSSE sends the event-stream headers and a 200 status on w.
func NewSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &SSE{w: w, f: f}
}

// Event writes v as JSON data under the event name; an empty name writes
// a data-only event, as OpenAI's Chat Completions stream does.
func (s *SSE) Event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		_, _ = fmt.Fprintf(s.w, "event: %s\n", name)
	}
	s.Data(string(b))
}

// Data writes a data-only event with data as it is, such as "[DONE]".
func (s *SSE) Data(data string) {
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}
