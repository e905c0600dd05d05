package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/convtrace/convtrace/store"
)

// Conn is what an import needs of a connection to a migrated convtrace
// database: a *topology.Conn satisfies it.
type Conn interface {
	store.BatchDB
}

// Result is what an import did: the rows it stored, those the database
// held already, and the JSONL lines it could not read.
type Result struct {
	Imported Counts `json:"imported"`
	Skipped  Counts `json:"skipped"`
	// BadLines are the first maxBadLines lines refused; BadLineCount
	// counts them all.
	BadLines     []BadLine `json:"bad_lines"`
	BadLineCount int64     `json:"bad_line_count"`
}

// BadLine is a JSONL line an import refused, and why.
type BadLine struct {
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// maxBadLines bounds the bad lines a Result lists.
const maxBadLines = 1000

func (r *Result) bad(line int64, err error) {
	r.BadLineCount++
	if len(r.BadLines) < maxBadLines {
		r.BadLines = append(r.BadLines, BadLine{Line: line, Reason: err.Error()})
	}
}

// Import stores the export src holds, plain or zstd, in conn's database: the
// rows it does not hold yet, each value as exported. A JSON envelope is checked
// whole before anything is stored; a JSONL export stores its valid lines.
// Imports into one database store one at a time (docs/design/transfer.md).
func Import(ctx context.Context, conn Conn, src io.ReadSeeker, name string, opts ...ImportOption) (Result, error) {
	cfg := newImportConfig(opts)
	in, err := newSource(src, name, cfg.maxSize)
	if err != nil {
		return Result{}, err
	}
	release, err := reserve(ctx, memoryFor(in.size), cfg.wait)
	if err != nil {
		return Result{}, err
	}
	defer release()
	format, err := in.format()
	if err != nil {
		return Result{}, err
	}
	imp := newImporter(conn, cfg.wait)
	switch format {
	case JSON:
		check := func(it *item) error {
			if err := validate(&it.rec); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrInvalid, it.where(), err)
			}
			return nil
		}
		if err := in.read(func(r io.Reader) error { return readJSON(r, check) }); err != nil {
			return Result{}, err
		}
		err := imp.run(ctx, func(emit func(*record) error) error {
			return in.read(func(r io.Reader) error {
				return readJSON(r, func(it *item) error { return emit(&it.rec) })
			})
		})
		return imp.res, err
	case JSONL:
		err := imp.run(ctx, func(emit func(*record) error) error {
			return in.read(func(r io.Reader) error { return imp.readLines(r, emit) })
		})
		return imp.res, err
	}
	return Result{}, fmt.Errorf("import format %q: not json or jsonl", format)
}

// readJSON reads an envelope, checking its version.
func readJSON(src io.Reader, emit func(*item) error) error {
	version, err := readEnvelope(src, emit)
	if err != nil {
		return err
	}
	return checkVersion(version)
}

// checkVersion is the one check of an export's schemaVersion, its
// envelope's or its JSONL header's.
func checkVersion(v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("%w: no schemaVersion: not a convtrace export", ErrInvalid)
	case v < 1:
		return fmt.Errorf("%w: schemaVersion %d is not a version: not a convtrace export", ErrInvalid, v)
	case v > SchemaVersion:
		return fmt.Errorf("%w: schemaVersion %d is newer than this convtrace reads (schemaVersion %d): upgrade convtrace to import it",
			ErrInvalid, v, SchemaVersion)
	}
	return nil
}

// readLines reads a JSONL export, handing each valid record to emit and
// noting the bad lines in the result.
func (imp *importer) readLines(src io.Reader, emit func(*record) error) error {
	lines := newLineReader(src)
	first, err := lines.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: line 1: %v", ErrInvalid, err)
	}
	head, err := decodeLine(first)
	if err != nil || head.Type != typeHeader {
		return fmt.Errorf(`%w: line 1: not a header {"type":"header","schemaVersion":%d,...}`, ErrInvalid, SchemaVersion)
	}
	if err := checkVersion(*head.SchemaVersion); err != nil {
		return err
	}
	for {
		b, err := lines.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, errTooLong) {
			imp.res.bad(lines.line, err)
			continue
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rec, err := decodeLine(b)
		if err == nil {
			err = validate(&rec)
		}
		if err != nil {
			imp.res.bad(lines.line, err)
			continue
		}
		if err := emit(&rec); err != nil {
			return err
		}
	}
}

// ImportReader imports an export read from r, named name (a file name,
// or "-" for standard input), as Import does: r is spooled to a temporary
// file first as it comes, compressed or not, so that it can be read
// again. Only what the caller sends is written to disk: an archive file
// is decompressed as it is read, within the bounds of decompress.
func ImportReader(ctx context.Context, conn Conn, r io.Reader, name string, opts ...ImportOption) (Result, error) {
	f, err := os.CreateTemp("", "convtrace-import-*")
	if err != nil {
		return Result{}, fmt.Errorf("spool import: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		return Result{}, fmt.Errorf("spool import: %w", err)
	}
	return Import(ctx, conn, f, name, opts...)
}
