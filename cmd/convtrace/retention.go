package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/convtrace/convtrace/schema/ddl"
	"github.com/convtrace/convtrace/viewer/query"
)

// retentionMargin is how much longer than --retention the table TTL keeps
// rows: the TTL is a backstop for when serve does not run, and the daily
// prune, which keeps every thread's shell and the summaries exact, removes
// the rows first.
const retentionMargin = 7 * 24 * time.Hour

// pruneEvery is how often serve --retention prunes.
const pruneEvery = 24 * time.Hour

// keepRetention applies serve's --retention: a table TTL of retention plus
// retentionMargin where the server has TTL, then a prune of what is older
// than retention now and every pruneEvery until ctx ends. Failures are
// printed to w and retried at the next round.
func keepRetention(ctx context.Context, db query.DB, retention time.Duration, w io.Writer) {
	switch err := ddl.SetRetention(ctx, db, retention+retentionMargin); {
	case errors.Is(err, ddl.ErrNoTTL):
		fmt.Fprintf(w, "retention: %v; turns older than %d days are pruned every day\n", err, retention/(24*time.Hour))
	case err != nil:
		fmt.Fprintf(w, "retention: %v\n", err)
	}
	store := query.New(db, 0, 0)
	for {
		scope := query.PruneScope{BeforeNS: uint64(time.Now().Add(-retention).UnixNano())}
		done, err := store.Prune(ctx, scope, nil)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			fmt.Fprintf(w, "retention: prune: %v\n", err)
		case done.Turns > 0 || done.Spans > 0:
			fmt.Fprintf(w, "retention: pruned %s older than %d days\n", describeRemoval(done.Removal), retention/(24*time.Hour))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pruneEvery):
		}
	}
}
