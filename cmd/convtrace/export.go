package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/transfer"
)

// largeExport is the number of threads from which an export shows a bar.
const largeExport = 100

func exportCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	thread := fs.String("thread", "", "only this thread")
	project := fs.String("project", "", "only this project's threads")
	since := fs.String("since", "", "only threads with a turn since: an age (24h, 7d) or a time (2026-05-01, RFC 3339) (default all time)")
	until := fs.String("until", "", "only threads with a turn before, like --since (default now)")
	var attrs threadAttrs
	fs.Var(&attrs, "attr", "only threads whose thread attribute KEY has VALUE: KEY=VALUE (repeatable, all must hold), e.g. task=T-7")
	outPath := fs.String("out", "", "file to write (default standard output)")
	format := fs.String("format", "json", "json (one envelope) or jsonl (one record a line, for large sets)")
	return func(ctx context.Context, out streams, _ []string) error {
		fm, err := transfer.ParseFormat(*format)
		if err != nil {
			return fmt.Errorf("--format: %q: %w", *format, err)
		}
		f := store.ExportFilter{ThreadID: *thread, Project: *project}
		if *since != "" || *until != "" {
			from := *since
			if from == "" {
				from = "1970-01-01"
			}
			r, err := store.ParseCostRange(from, *until, time.Now())
			if err != nil {
				return flagError(err, map[string]string{"from": "--since", "to": "--until"})
			}
			f.FromNS, f.ToNS = r.FromNS, r.ToNS
		}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		if len(attrs) > 0 {
			f.ThreadIDs, err = store.New(st.conn, 1000, 0).ThreadIDs(ctx, store.ThreadFilter{Project: *project, Attrs: attrs.Map()})
			if err != nil {
				return err
			}
			if len(f.ThreadIDs) == 0 {
				return fmt.Errorf("--attr %s: no thread has it", attrs.String())
			}
		}
		w, done, err := openOut(*outPath, out.stdout)
		if err != nil {
			return err
		}
		var opts []transfer.ExportOption
		if terminal(out.stderr) {
			opts = append(opts, transfer.WithProgress(exportBar(out.stderr)))
		}
		n, err := transfer.Export(ctx, st.conn, w, f, fm, opts...)
		if err := done(err); err != nil {
			return err
		}
		fmt.Fprintf(out.stderr, "exported %d threads: %d turns, %d spans, %d notes\n", n.Threads, n.Turns, n.Spans, n.Notes)
		return nil
	}
}

// exportBar returns the progress function of an export that draws a bar
// once it knows the export is large.
func exportBar(w io.Writer) func(done, total int) {
	var bar interface{ Set(int) error }
	started := false
	return func(done, total int) {
		if !started {
			started = true
			if b := newBar(w, int64(total), largeExport, "exporting threads", false); b != nil {
				bar = b
			}
		}
		if bar != nil {
			_ = bar.Set(done)
		}
	}
}

// openOut returns where an export goes: path, written to a temporary file
// renamed into place once complete, or stdout when path is empty or "-".
// done closes it, given the export's error, and returns the first error.
func openOut(path string, stdout io.Writer) (io.Writer, func(error) error, error) {
	if path == "" || path == "-" {
		return stdout, func(err error) error { return err }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".convtrace-export-*")
	if err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	done := func(err error) error {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--out: %w", cerr)
		}
		if err == nil {
			if err = os.Rename(f.Name(), path); err != nil {
				err = fmt.Errorf("--out: %w", err)
			}
		}
		if err != nil {
			os.Remove(f.Name())
		}
		return err
	}
	return f, done, nil
}
