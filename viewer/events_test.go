package viewer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// sseEvent is one event of the change feed as a client reads it.
type sseEvent struct {
	id, typ string
	data    map[string]any
}

func (e sseEvent) String() string { return e.typ + " " + str(e.data["thread_id"]) }

func str(v any) string { s, _ := v.(string); return s }

// openFeed opens GET /api/events (with Last-Event-ID last, unless empty)
// and returns its events as they come; the stream ends with the test.
func openFeed(t *testing.T, url, last string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s: status %d", url, res.StatusCode)
	}
	events := make(chan sseEvent, 100)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		defer res.Body.Close()
		var ev sseEvent
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.typ != "" {
					events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			}
		}
	}()
	return events
}

// expectEvents reads the events want names ("type thread"), in order.
func expectEvents(t *testing.T, events <-chan sseEvent, want ...string) []sseEvent {
	t.Helper()
	var got []sseEvent
	for _, w := range want {
		select {
		case ev := <-events:
			got = append(got, ev)
			if ev.String() != w {
				t.Fatalf("event %d: got %q (%v), want %q; so far %v", len(got), ev, ev.data, w, got)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no event %q within 20 s; got %v", w, got)
		}
	}
	return got
}

// The change feed reports, in order, a thread created and updated as its
// rows are written (with its provider session), renamed, archived and
// deleted through the API; a client that reconnects with Last-Event-ID
// gets what it missed.
func TestChangeFeed(t *testing.T) {
	conn, _ := testkit.Open(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	v := viewer.New(conn, viewer.WithLogger(log), viewer.WithChangeFeed(100*time.Millisecond, 0))
	t.Cleanup(func() { _ = v.Shutdown(context.Background()) })
	h := v.Handler()
	base := serve(t, h)

	// A thread stored before the feed starts is not news.
	p, r := call("old", "old-a", "plan", 0, "planner", "openai", "gpt-5", 0, "before", "ok")
	testkit.InsertTurns(t, conn, p, r)

	events := openFeed(t, base+"/api/events", "")
	withSession := func(ts []schema.Turn, id string) []schema.Turn {
		for i := range ts {
			ts[i].SessionID = id
		}
		return ts
	}
	p, r = call("feed1", "feed1-a", "plan", 0, "planner", "openai", "gpt-5", 10, "first", "ok")
	testkit.InsertTurns(t, conn, withSession([]schema.Turn{p, r}, "s1")...)
	got := expectEvents(t, events, "created feed1", "session feed1")
	if got[1].data["session_id"] != "s1" {
		t.Errorf("session event %v, want session_id s1", got[1].data)
	}
	p, r = call("feed1", "feed1-b", "plan", 0, "planner", "openai", "gpt-5", 20, "second", "ok")
	testkit.InsertTurns(t, conn, withSession([]schema.Turn{p, r}, "s2")...)
	got = expectEvents(t, events, "updated feed1", "session feed1")
	if got[0].data["turns"] != float64(4) || got[1].data["session_id"] != "s2" || got[1].data["previous_session_id"] != "s1" {
		t.Errorf("update events %v and %v, want 4 turns and session s1 → s2", got[0].data, got[1].data)
	}
	updatedID := got[0].id

	ok := func(res response) {
		t.Helper()
		if res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	ok(send(t, h, http.MethodPatch, "/api/threads/feed1", "application/json", `{"title": "Renamed"}`))
	got = expectEvents(t, events, "renamed feed1")
	if got[0].data["title"] != "Renamed" {
		t.Errorf("renamed event %v, want the title Renamed", got[0].data)
	}
	ok(send(t, h, http.MethodPatch, "/api/threads/feed1", "application/json", `{"archived": true}`))
	got = expectEvents(t, events, "archived feed1")
	if got[0].data["archived"] != true {
		t.Errorf("archived event %v, want archived true", got[0].data)
	}
	ok(send(t, h, http.MethodDelete, "/api/threads/feed1", "application/json", `{"confirm": "feed1"}`))
	expectEvents(t, events, "deleted feed1")

	// A change made elsewhere (another viewer, the CLI) is read from the
	// table as the viewer's own are.
	insertMeta(t, conn, threadMeta{thread: "old", title: "Elsewhere", updatedNS: uint64(time.Now().UnixNano())})
	expectEvents(t, events, "renamed old")

	// A client that saw the update gets what came after it.
	again := openFeed(t, base+"/api/events", updatedID)
	expectEvents(t, again, "session feed1", "renamed feed1", "archived feed1", "deleted feed1", "renamed old")
	// One whose last event is too old is told to reload.
	expectEvents(t, openFeed(t, base+"/api/events", "1"), "reset ")
	select {
	case ev := <-events:
		t.Errorf("an extra event: %v %v", ev, ev.data)
	case <-time.After(500 * time.Millisecond):
	}
}
