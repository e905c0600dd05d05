package viewer

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/store"
)

// quietSource is a store where nothing changes.
type quietSource struct{}

func (quietSource) FeedStart(context.Context) (store.FeedCursor, error) {
	return store.FeedCursor{}, nil
}
func (quietSource) Changes(_ context.Context, c store.FeedCursor) (store.FeedChanges, error) {
	return store.FeedChanges{Next: c}, nil
}

func feedServer(t *testing.T) (*Server, string) {
	t.Helper()
	s := &Server{log: slog.New(slog.DiscardHandler), feed: newFeed(quietSource{}, slog.New(slog.DiscardHandler), 20*time.Millisecond, time.Hour)}
	srv := httptest.NewServer(s.router())
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		srv.Close()
	})
	return s, srv.URL
}

// A client that does not read is dropped once its queue is full: what the
// feed holds stays bounded however many events it misses, and the client
// finds reset at the end of what it was sent.
func TestFeedDropsSlowClient(t *testing.T) {
	s, base := feedServer(t)
	req, _ := http.NewRequest(http.MethodGet, base+"/api/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	title := strings.Repeat("x", 8<<10)
	for i := 0; i < 20000; i++ {
		s.feed.publishDeleted(title)
		s.feed.mu.Lock()
		n, subs := len(s.feed.kept), len(s.feed.subs)
		s.feed.mu.Unlock()
		if n > feedKept {
			t.Fatalf("the feed keeps %d events, at most %d", n, feedKept)
		}
		if subs == 0 {
			t.Logf("dropped after %d events", i+1)
			break
		}
	}
	s.feed.mu.Lock()
	subs := len(s.feed.subs)
	s.feed.mu.Unlock()
	if subs != 0 {
		t.Fatalf("a client that reads nothing is still subscribed after 20000 events of 8 KiB")
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(body), "event: reset\ndata: {\"reason\":\"this client fell behind\"}\n\n") {
		t.Fatalf("the stream of a dropped client ends with %q, want a reset event", tail(string(body)))
	}
}

// Last-Event-ID resumes after the event it names; an id no longer kept
// (or never sent) gets reset.
func TestFeedResumes(t *testing.T) {
	s, base := feedServer(t)
	s.feed.publishDeleted("a")
	s.feed.publishDeleted("b")
	s.feed.publishDeleted("c")
	first := s.feed.kept[0].ID
	for _, c := range []struct {
		last string
		want []string
	}{
		{itoa(first), []string{"deleted b", "deleted c"}},
		{itoa(first + 2), nil},
		{itoa(first - 1), []string{"deleted a", "deleted b", "deleted c"}},
		{itoa(first - 2), []string{"reset "}},
		{"1", []string{"reset "}},
		{"junk", []string{"reset "}},
	} {
		got := readEvents(t, base+"/api/events", c.last, len(c.want))
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Last-Event-ID %s: got %q, want %q", c.last, got, c.want)
		}
	}
	// At shutdown the stream ends.
	req, _ := http.NewRequest(http.MethodGet, base+"/api/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(res.Body); done <- err }()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stream at shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open 5 s after Shutdown")
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// readEvents reads n events ("type thread") of a stream opened with
// Last-Event-ID last, then a moment more to see that no other comes;
// a reset ends the reading.
func readEvents(t *testing.T, url, last string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Last-Event-ID", last)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got []string
	typ := ""
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			thread := ""
			if i := strings.Index(line, `"thread_id":"`); i >= 0 {
				thread = strings.SplitN(line[i+len(`"thread_id":"`):], `"`, 2)[0]
			}
			got = append(got, typ+" "+thread)
			if typ == eventReset {
				return got
			}
		}
	}
	return got
}

func tail(s string) string { return s[max(0, len(s)-200):] }

// The feed needs the viewer's token as every page does, and an idle
// stream carries heartbeats; a reset reaches the streams of one thread.
func TestFeedTokenAndHeartbeat(t *testing.T) {
	s, _ := feedServer(t)
	s.feed.heartbeat = 20 * time.Millisecond
	s.token = "secret"
	srv := httptest.NewServer(s.router())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/events without the token: status %d, want 401", res.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events?thread=th", nil)
	req.Header.Set("Authorization", "Bearer secret")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	beats := 0
	for sc.Scan() && beats < 2 {
		if sc.Text() == ": heartbeat" {
			beats++
		}
	}
	if beats < 2 {
		t.Fatalf("%d heartbeats in a second, want them every 20 ms", beats)
	}
	s.feed.mu.Lock()
	s.feed.publishLocked(eventDeleted, eventData{ThreadID: "other"})
	s.feed.publishLocked(eventReset, eventData{Reason: "test"})
	s.feed.mu.Unlock()
	for sc.Scan() {
		switch sc.Text() {
		case "event: deleted":
			t.Fatal("a stream of thread th got another thread's event")
		case "event: reset":
			return
		}
	}
	t.Fatal("the stream of one thread did not get reset")
}
