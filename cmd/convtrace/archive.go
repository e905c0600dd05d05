package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/archive"
	"github.com/convtrace/convtrace/store/page"
)

func archiveCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	olderThan := fs.String("older-than", "", "archive the threads whose last turn started longer ago than this age (30d, 720h; required)")
	dir := fs.String("to", "", "folder the archive files go to, one per thread: DIR/{project}/{thread}"+archive.Ext+" (required)")
	project := fs.String("project", "", "only the threads of this project (default all)")
	return func(ctx context.Context, out streams, _ []string) error {
		if *dir == "" {
			return errors.New("--to: name the folder the archive files go to")
		}
		before, err := ageFlag("--older-than", *olderThan)
		if err != nil {
			return err
		}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		res, err := runArchive(ctx, st.conn, *dir, before, *project, out.stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "archived %d threads (%d turns, %d spans, %d notes) to %s, %s written; restore one with convtrace import FILE\n",
			res.Threads, res.Counts.Turns, res.Counts.Spans, res.Counts.Notes, *dir, bytesString(uint64(res.Bytes)))
		return nil
	}
}

// largeArchive is how many threads an archive run shows a bar from.
const largeArchive = 20

// runArchive archives, with a bar on a terminal.
func runArchive(ctx context.Context, db store.DB, dir string, before time.Time, project string, w io.Writer) (archive.Result, error) {
	var bar interface{ Set(int) error }
	return archive.Run(ctx, db, dir, before, project, func(done, total int) {
		if bar == nil {
			if b := newBar(w, int64(total), largeArchive, "archiving threads", false); b != nil {
				bar = b
			}
		}
		if bar != nil {
			_ = bar.Set(done)
		}
	})
}

// ageFlag reads an age flag such as 30d into the time that long ago.
func ageFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, fmt.Errorf("%s: give an age, such as 180d", name)
	}
	age, err := page.ParseAge(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", name, err)
	}
	if age <= 0 {
		return time.Time{}, fmt.Errorf("%s: %q is no age: give one longer than zero, such as 180d", name, v)
	}
	return time.Now().Add(-age), nil
}
