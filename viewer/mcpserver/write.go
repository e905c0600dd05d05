package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Writer is what the writing tools change: store.Store satisfies it. Its
// methods are called concurrently, one call per tool call.
type Writer interface {
	ThreadExists(ctx context.Context, threadID string) (bool, error)
	ResetContext(ctx context.Context, threadID string, now time.Time) (time.Time, error)
	ChangeThread(ctx context.Context, id string, ch store.ThreadChange, nowNS uint64) error
}

var _ Writer = store.Store{}

const resetContextDoc = `Writes (only with convtrace mcp --allow-writes): starts a thread's recent context anew. From now on ` +
	`recent_context (and the viewer's GET /api/threads/ID/context) gives only what is said after this reset; every ` +
	`earlier turn stays stored, in get_thread and on the thread page, which shows the reset as a divider. ` +
	`Answers the time of the reset.`

type resetContextIn struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread's id, as list_threads or search gives it"`
}

type resetContextOut struct {
	ThreadID string    `json:"thread_id"`
	ResetAt  time.Time `json:"reset_at"`
}

func (s *server) resetContext(ctx context.Context, in resetContextIn) (resetContextOut, error) {
	id, err := threadID(in.ThreadID)
	if err != nil {
		return resetContextOut{}, err
	}
	at, err := s.writes.ResetContext(ctx, id, time.Now())
	if err != nil {
		return resetContextOut{}, fmt.Errorf("thread %q: %w", id, err)
	}
	return resetContextOut{ThreadID: id, ResetAt: at}, nil
}

const setTitleDoc = `Writes (only with convtrace mcp --allow-writes): names a thread, as a rename in the viewer does: ` +
	`the threads list and list_threads show the title from now on. An empty title gives the thread back its ` +
	`automatic one (the first line of its first user message). At most 200 characters, put on one line. ` +
	`Answers the thread as list_threads shows it.`

type setTitleIn struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread's id, as list_threads or search gives it"`
	Title    string `json:"title" jsonschema:"the thread's new title, at most 200 characters; empty for the automatic one"`
}

func (s *server) setTitle(ctx context.Context, in setTitleIn) (store.Thread, error) {
	id, err := threadID(in.ThreadID)
	if err != nil {
		return store.Thread{}, err
	}
	title, err := store.NormalTitle("title", in.Title)
	if err != nil {
		return store.Thread{}, err
	}
	found, err := s.writes.ThreadExists(ctx, id)
	if err == nil && !found {
		err = store.ErrNotFound
	}
	if err == nil {
		err = s.writes.ChangeThread(ctx, id, store.ThreadChange{Title: &title}, uint64(time.Now().UnixNano()))
	}
	if err != nil {
		return store.Thread{}, fmt.Errorf("thread %q: %w", id, err)
	}
	th, err := s.store.Thread(ctx, id)
	if err != nil {
		return store.Thread{}, fmt.Errorf("thread %q: %w", id, err)
	}
	return th, nil
}

// threadID is a thread_id argument, trimmed; empty is refused.
func threadID(arg string) (string, error) {
	id := strings.TrimSpace(arg)
	if id == "" {
		return "", page.BadParam("thread_id", "is empty: list_threads or search gives thread ids")
	}
	return id, nil
}
