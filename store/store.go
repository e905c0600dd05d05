package store

import (
	"context"
	"errors"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"golang.org/x/sync/singleflight"

	"github.com/convtrace/convtrace/store/topology"
)

// ErrNotFound means no turn of the thread asked for exists.
var ErrNotFound = errors.New("thread not found")

// Store runs the viewer's queries and keeps the summary tables they read
// from (summary.go, cost_rollup.go).
type Store struct {
	db          DB
	ThreadLimit int
	// interruptedAfter is how long a call that has not ended stays running
	// without a heartbeat.
	interruptedAfter time.Duration
	// flights lets concurrent requests share one refresh of a summary
	// table instead of each recomputing the same rows; nil shares none
	// (the store of RecentContext and QueryCost, which serve one caller).
	flights *singleflight.Group
	// tables is how conversations is stored, asked once (layout.go).
	tables *layout
	// facets keeps the search's facets a while (search_facets.go); nil
	// keeps none.
	facets *facetCache
	// pins reaches a cluster's replicas one by one (pinned.go); nil on
	// one server, or when the caller gave none.
	pins *pinning
}

// New returns the queries over db: the threads list shows at most
// threadLimit threads, a call that has not ended and was not heard of for
// interruptedAfter is interrupted, and concurrent requests share each
// refresh of a summary table.
func New(db DB, threadLimit int, interruptedAfter time.Duration) Store {
	return Store{db: db, ThreadLimit: threadLimit, interruptedAfter: interruptedAfter,
		flights: new(singleflight.Group), tables: new(layout), facets: new(facetCache)}
}

// aliveSince is the cutoff of callAlive: a call that has not ended and
// was not heard of since is interrupted.
func (s Store) aliveSince() uint64 {
	return uint64(time.Now().Add(-s.interruptedAfter).UnixNano())
}

// DB is a connection to the convtrace database (a *topology.Conn). Query and
// Exec are called concurrently, one call per request, with its context; only
// DeleteThread and Prune delete (docs/design/cluster.md, "store.DB").
type DB interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	Exec(ctx context.Context, query string, args ...any) error
	Cluster() topology.Cluster
}

// ErrTraceNotFound means no span or turn of the trace asked for exists.
// It is ErrNotFound to the handlers' error mapping (404), with its own
// message.
var ErrTraceNotFound error = notFoundError("trace not found")

// notFoundError is a missing trace or turn, with its own message; errors.Is
// matches it to ErrNotFound, which the handlers answer with 404.
type notFoundError string

func (e notFoundError) Error() string        { return string(e) }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }
