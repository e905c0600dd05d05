package viewer

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/convtrace/convtrace/store"
)

// The change feed: GET /api/events streams Server-Sent Events of what
// happens to threads. One goroutine (watch) asks the store what changed
// once a poll while a client listens; a deletion through the viewer, which
// leaves no row to read, is published directly. Every client has a
// bounded queue: one that falls behind is sent reset and dropped. The
// last feedKept events are kept, so that a client that reconnects with
// Last-Event-ID gets what it missed, or reset when that is gone.
const (
	feedKept    = 1024 // events kept for clients that reconnect
	feedQueue   = 64   // events queued for one client
	feedWriteIn = 10 * time.Second
)

// The feed's event types.
const (
	eventCreated  = "created"
	eventUpdated  = "updated"
	eventRenamed  = "renamed"
	eventArchived = "archived"
	eventDeleted  = "deleted"
	eventSession  = "session"
	eventReset    = "reset"
)

// WithChangeFeed sets how often the change feed asks the store what
// changed while a client listens (1 s by default) and how long a stream
// stays silent before a heartbeat comment (15 s). Zero keeps a default.
func WithChangeFeed(poll, heartbeat time.Duration) Option {
	return optionFunc(func(c *config) {
		if poll > 0 {
			c.feedPoll = poll
		}
		if heartbeat > 0 {
			c.feedBeat = heartbeat
		}
	})
}

// feedEvent is one event: Data is its JSON, which names the thread.
type feedEvent struct {
	ID     uint64
	Type   string
	Thread string
	Data   []byte
}

// eventData is what an event's data says; fields that do not apply are
// left out.
type eventData struct {
	ThreadID        string  `json:"thread_id,omitempty"`
	Project         string  `json:"project,omitempty"`
	Turns           *uint64 `json:"turns,omitempty"`
	LastNS          *uint64 `json:"last_ns,omitempty"`
	Title           *string `json:"title,omitempty"`
	Archived        *bool   `json:"archived,omitempty"`
	SessionID       *string `json:"session_id,omitempty"`
	PreviousSession *string `json:"previous_session_id,omitempty"`
	Reason          string  `json:"reason,omitempty"`
}

// changeSource is what the feed reads of the store.
type changeSource interface {
	FeedStart(ctx context.Context) (store.FeedCursor, error)
	Changes(ctx context.Context, c store.FeedCursor) (store.FeedChanges, error)
}

// subscriber is one client's queue; thread, when set, keeps only that
// thread's events.
type subscriber struct {
	ch      chan feedEvent
	thread  string
	dropped bool // the queue overflowed: the client is sent reset
}

// wants reports whether the subscriber gets ev: every event without a
// thread (reset) and those of its thread.
func (sub *subscriber) wants(ev feedEvent) bool {
	return sub.thread == "" || ev.Thread == "" || ev.Thread == sub.thread
}

type feed struct {
	src       changeSource
	log       *slog.Logger
	poll      time.Duration
	heartbeat time.Duration

	startMu sync.Mutex // one FeedStart at a time

	mu        sync.Mutex
	last      uint64      // the newest event id
	kept      []feedEvent // the newest events, oldest first
	subs      map[*subscriber]struct{}
	watching  bool
	watchDone chan struct{}
	cursor    *store.FeedCursor
	closed    bool
	done      chan struct{}
}

// newFeed returns a feed whose event ids start past the current time in
// microseconds, so that they keep growing across restarts.
func newFeed(src changeSource, log *slog.Logger, poll, heartbeat time.Duration) *feed {
	return &feed{src: src, log: log, poll: poll, heartbeat: heartbeat,
		last: uint64(time.Now().UnixMicro()), subs: map[*subscriber]struct{}{},
		done: make(chan struct{})}
}

// publish numbers and sends an event to every subscriber it concerns,
// dropping those whose queue is full. Called with f.mu held.
func (f *feed) publishLocked(typ string, d eventData) {
	data, err := json.Marshal(d)
	if err != nil {
		f.log.Error("viewer: encode event", "err", err)
		return
	}
	f.last++
	ev := feedEvent{ID: f.last, Type: typ, Thread: d.ThreadID, Data: data}
	f.kept = append(f.kept, ev)
	if len(f.kept) > feedKept {
		f.kept = append(f.kept[:0:0], f.kept[len(f.kept)-feedKept:]...)
	}
	for sub := range f.subs {
		if !sub.wants(ev) {
			continue
		}
		select {
		case sub.ch <- ev:
		default:
			sub.dropped = true
			delete(f.subs, sub)
			close(sub.ch)
		}
	}
}

// publishDeleted publishes a thread the viewer deleted.
func (f *feed) publishDeleted(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.publishLocked(eventDeleted, eventData{ThreadID: id})
}

// subscribe registers a client and returns the events it missed after
// lastID (when it sent one), or reset when they are no longer kept.
func (f *feed) subscribe(thread string, lastID *uint64) (*subscriber, []feedEvent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, nil, false
	}
	sub := &subscriber{ch: make(chan feedEvent, feedQueue), thread: thread}
	var missed []feedEvent
	reset := false
	if lastID != nil && *lastID != f.last {
		oldest := f.last + 1
		if len(f.kept) > 0 {
			oldest = f.kept[0].ID
		}
		if *lastID+1 < oldest || *lastID > f.last {
			reset = true
		} else {
			for _, ev := range f.kept {
				if ev.ID > *lastID && sub.wants(ev) {
					missed = append(missed, ev)
				}
			}
		}
	}
	f.subs[sub] = struct{}{}
	if !f.watching {
		f.watching = true
		f.watchDone = make(chan struct{})
		go f.watch(f.watchDone)
	}
	return sub, missed, reset
}

func (f *feed) unsubscribe(sub *subscriber) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[sub]; ok {
		delete(f.subs, sub)
		close(sub.ch)
	}
}

// watch asks the store what changed every poll and publishes it, until
// no client listens or the feed is closed.
func (f *feed) watch(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		f.mu.Lock()
		if len(f.subs) == 0 || f.closed {
			f.watching = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		cursor, err := f.start(ctx)
		if err != nil {
			if ctx.Err() == nil {
				f.log.Warn("viewer: change feed start", "err", err)
			}
		} else if ch, err := f.src.Changes(ctx, cursor); err == nil {
			f.apply(ch)
		} else if ctx.Err() == nil {
			f.log.Warn("viewer: change feed poll", "err", err)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// start returns the feed's cursor, asking the store for it the first
// time: what is stored after it is reported.
func (f *feed) start(ctx context.Context) (store.FeedCursor, error) {
	f.startMu.Lock()
	defer f.startMu.Unlock()
	f.mu.Lock()
	cursor := f.cursor
	f.mu.Unlock()
	if cursor != nil {
		return *cursor, nil
	}
	c, err := f.src.FeedStart(ctx)
	if err != nil {
		return store.FeedCursor{}, err
	}
	f.mu.Lock()
	if f.cursor == nil {
		f.cursor = &c
	}
	c = *f.cursor
	f.mu.Unlock()
	return c, nil
}

// apply publishes what one poll found.
func (f *feed) apply(ch store.FeedChanges) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cursor = &ch.Next
	if ch.Overflow {
		f.publishLocked(eventReset, eventData{Reason: "more threads changed at once than the feed reports"})
		return
	}
	for _, d := range ch.Threads {
		switch {
		case d.Gone:
			f.publishLocked(eventDeleted, eventData{ThreadID: d.ThreadID, Project: d.Project})
			continue
		case d.Created:
			f.publishLocked(eventCreated, eventData{ThreadID: d.ThreadID, Project: d.Project, Turns: &d.Turns, LastNS: &d.LastNS})
		default:
			f.publishLocked(eventUpdated, eventData{ThreadID: d.ThreadID, Project: d.Project, Turns: &d.Turns, LastNS: &d.LastNS})
		}
		if d.Session != d.WasSession {
			f.publishLocked(eventSession, eventData{ThreadID: d.ThreadID, SessionID: &d.Session, PreviousSession: &d.WasSession})
		}
	}
	for _, d := range ch.Meta {
		if d.Title != d.WasTitle {
			f.publishLocked(eventRenamed, eventData{ThreadID: d.ThreadID, Title: &d.Title})
		}
		if d.Archived != d.WasArchived {
			f.publishLocked(eventArchived, eventData{ThreadID: d.ThreadID, Archived: &d.Archived})
		}
	}
}

// close ends every stream and the watcher, and waits for the watcher
// until ctx ends. It may be called more than once.
func (f *feed) close(ctx context.Context) error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	done := f.watchDone
	watching := f.watching
	f.mu.Unlock()
	if !watching {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
