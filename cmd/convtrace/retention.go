package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
)

// retentionMargin is how much longer than --retention the table TTL keeps
// rows: the TTL is a backstop for when serve does not run, and the daily
// prune, which keeps every thread's shell and the summaries exact, removes
// the rows first.
const retentionMargin = 7 * 24 * time.Hour

// daily is how often serve prunes (--retention) and archives
// (--archive-after).
const daily = 24 * time.Hour

// keepRetention applies serve's --retention: a table TTL of retention plus
// retentionMargin where the server has TTL, then a prune of what is older
// than retention now and every day until ctx ends, each followed by the
// removal of the threads a prune emptied more than shells ago
// (--shell-retention).
func keepRetention(ctx context.Context, db store.DB, retention, shells time.Duration, w io.Writer) {
	days := retention / (24 * time.Hour)
	switch err := ddl.SetRetention(ctx, db, retention+retentionMargin); {
	case errors.Is(err, ddl.ErrNoTTL):
		fmt.Fprintf(w, "retention: %v; turns older than %d days are pruned every day\n", err, days)
	case err != nil:
		fmt.Fprintf(w, "retention: %v\n", err)
	}
	reads := store.New(db, 0, 0)
	everyDay(ctx, w, "retention", func(ctx context.Context) (string, error) {
		scope := store.PruneScope{BeforeNS: uint64(time.Now().Add(-retention).UnixNano())}
		done, err := reads.Prune(ctx, scope, nil)
		if err != nil {
			return "", err
		}
		emptied, err := reads.RemoveEmptyShells(ctx, "", time.Now().Add(-shells))
		var did []string
		if done.Turns > 0 || done.Spans > 0 {
			did = append(did, fmt.Sprintf("pruned %s older than %d days", describeRemoval(done.Removal), days))
		}
		if emptied > 0 {
			did = append(did, fmt.Sprintf("removed %d threads emptied by a prune over %d days ago", emptied, shells/(24*time.Hour)))
		}
		return strings.Join(did, "; "), err
	})
}

// keepArchived applies serve's --archive-after: the threads idle for
// after are archived to dir now and every day until ctx ends.
func keepArchived(ctx context.Context, db store.DB, after time.Duration, dir string, w io.Writer) {
	everyDay(ctx, w, "archive", func(ctx context.Context) (string, error) {
		res, err := runArchive(ctx, db, dir, time.Now().Add(-after), "", io.Discard)
		if err != nil || res.Threads == 0 {
			return "", err
		}
		return fmt.Sprintf("archived %d threads (%d turns) to %s", res.Threads, res.Counts.Turns, dir), nil
	})
}

// everyDay runs job now and then every day until ctx ends, printing to w
// what it did (when it says) or why it failed, to be retried the next day.
func everyDay(ctx context.Context, w io.Writer, name string, job func(context.Context) (string, error)) {
	for {
		did, err := job(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			fmt.Fprintf(w, "%s: %v\n", name, err)
		case did != "":
			fmt.Fprintf(w, "%s: %s\n", name, did)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(daily):
		}
	}
}
