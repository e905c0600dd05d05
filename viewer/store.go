package viewer

import (
	"errors"

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
	costFlight  *singleflight.Group // shares cost recomputes of the same days; nil: none
}
