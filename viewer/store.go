package viewer

import (
	"errors"
	"time"

	"golang.org/x/sync/singleflight"
)

// errNotFound means no turn of the thread asked for exists.
var errNotFound = errors.New("thread not found")

// store runs the viewer's queries. Its SQL lives in one file per concern:
// store_threads.go, store_turns.go, store_notes.go, store_traces.go,
// store_search.go, store_context.go and store_cost.go.
type store struct {
	db          DB
	threadLimit int
	// interruptedAfter is how long a call that has not ended stays running
	// without a heartbeat.
	interruptedAfter time.Duration
	// flights lets concurrent requests share one refresh of a summary
	// table instead of each recomputing the same rows; nil shares none
	// (the store of RecentContext and QueryCost, which serve one caller).
	flights *singleflight.Group
}

// aliveSince is the cutoff of callAlive: a call that has not ended and
// was not heard of since is interrupted.
func (s store) aliveSince() uint64 {
	return uint64(time.Now().Add(-s.interruptedAfter).UnixNano())
}
