package viewer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// Shutdown ends the change feed's streams and its watcher: call it before
// the http.Server's Shutdown, which waits for open streams. It is
// idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.feed.close(ctx)
}

// eventsRoutes serves the change feed.
func (s *Server) eventsRoutes(api *gin.RouterGroup) {
	api.GET("/events", s.events)
}

// events answers GET /api/events (?thread=ID for one thread's events)
// with a stream of Server-Sent Events; a Last-Event-ID header (or
// ?last_event_id=) resumes after that event.
func (s *Server) events(c *gin.Context) {
	var lastID *uint64
	if v := c.GetHeader("Last-Event-ID"); v != "" || c.Query("last_event_id") != "" {
		if v == "" {
			v = c.Query("last_event_id")
		}
		if id, err := strconv.ParseUint(v, 10, 64); err == nil {
			lastID = &id
		} else {
			zero := uint64(0)
			lastID = &zero // not an id of this feed: reset
		}
	}
	// The stream opens once the feed knows where it starts, so that what
	// is stored after this answer starts is reported.
	if _, err := s.feed.start(c.Request.Context()); err != nil {
		s.apiError(c, err)
		return
	}
	sub, missed, reset := s.feed.subscribe(c.Query("thread"), lastID)
	if sub == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, apiErrorBody{"the viewer is shutting down"})
		return
	}
	defer s.feed.unsubscribe(sub)
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Status(http.StatusOK)
	rc := http.NewResponseController(c.Writer)
	write := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(feedWriteIn))
		if _, err := c.Writer.WriteString(text); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// The retry field: how long a browser waits before it reconnects.
	if !write("retry: 2000\n: convtrace change feed\n\n") {
		return
	}
	if reset {
		write(resetText("the events after Last-Event-ID are no longer kept"))
		return
	}
	for _, ev := range missed {
		if !write(eventText(ev)) {
			return
		}
	}
	beat := time.NewTicker(s.feed.heartbeat)
	defer beat.Stop()
	ctx := c.Request.Context()
	for {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				if sub.dropped {
					write(resetText("this client fell behind"))
				}
				return
			}
			if !write(eventText(ev)) {
				return
			}
		case <-beat.C:
			if !write(": heartbeat\n\n") {
				return
			}
		case <-s.feed.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

func eventText(ev feedEvent) string {
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, ev.Data)
}

// resetText is a reset event, without an id: the client reloads.
func resetText(reason string) string {
	data, _ := json.Marshal(eventData{Reason: reason})
	return fmt.Sprintf("event: %s\ndata: %s\n\n", eventReset, data)
}
