package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/convtrace/convtrace/store/transfer"
)

// largeImport is the file size from which an import shows a bar.
const largeImport = 8 << 20

func importCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	return func(ctx context.Context, out streams, files []string) error {
		if len(files) == 0 {
			return errors.New("name the files to import (- for standard input)")
		}
		st, err := sf.open(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		bad := false
		for _, name := range files {
			res, err := importFile(ctx, st.conn, name, out)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(out.stdout, "%s: imported %d threads, %d turns, %d spans, %d notes; skipped (already stored) %d threads, %d turns, %d spans, %d notes\n",
				name, res.Imported.Threads, res.Imported.Turns, res.Imported.Spans, res.Imported.Notes,
				res.Skipped.Threads, res.Skipped.Turns, res.Skipped.Spans, res.Skipped.Notes)
			for _, l := range res.BadLines {
				fmt.Fprintf(out.stderr, "%s:%d: %s\n", name, l.Line, l.Reason)
			}
			if res.BadLineCount > 0 {
				bad = true
				fmt.Fprintf(out.stderr, "%s: %d bad lines not imported\n", name, res.BadLineCount)
			}
		}
		if bad {
			return exitCode(1)
		}
		return nil
	}
}

// importFile imports one file, or standard input for "-". A pipe or a
// device is read once, into a temporary file as it comes; a file is read
// in place, decompressed as it is read when it is an archive file.
func importFile(ctx context.Context, conn transfer.Conn, name string, out streams) (transfer.Result, error) {
	if name == "-" {
		return transfer.ImportReader(ctx, conn, out.stdin, name)
	}
	f, err := os.Open(name)
	if err != nil {
		return transfer.Result{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return transfer.ImportReader(ctx, conn, f, name)
	}
	var src io.ReadSeeker = f
	if bar := newBar(out.stderr, st.Size(), largeImport, "reading", true); bar != nil {
		src = barReader{File: f, bar: bar}
	}
	return transfer.Import(ctx, conn, src, name)
}
