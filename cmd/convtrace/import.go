package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/convtrace/convtrace/internal/transfer"
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

// importFile imports one file, or standard input for "-".
func importFile(ctx context.Context, conn transfer.Conn, name string, out streams) (transfer.Result, error) {
	if name == "-" {
		r, _, err := transfer.Decompress(out.stdin, name)
		if err != nil {
			return transfer.Result{}, err
		}
		defer r.Close()
		return transfer.ImportReader(ctx, conn, r, name)
	}
	f, err := os.Open(name)
	if err != nil {
		return transfer.Result{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || strings.HasSuffix(name, ".zst") {
		// A pipe, a device or an archive file: read it once, into a file.
		r, plain, err := transfer.Decompress(f, name)
		if err != nil {
			return transfer.Result{}, err
		}
		defer r.Close()
		return transfer.ImportReader(ctx, conn, r, plain)
	}
	format, err := transfer.Detect(name, f)
	if err != nil {
		return transfer.Result{}, err
	}
	var src io.ReadSeeker = f
	if bar := newBar(out.stderr, st.Size(), largeImport, "reading", true); bar != nil {
		src = barReader{File: f, bar: bar}
	}
	return transfer.Import(ctx, conn, src, format)
}
