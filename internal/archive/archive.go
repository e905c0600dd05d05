package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convtrace/convtrace/internal/transfer"
	"github.com/convtrace/convtrace/viewer/query"
)

// Ext is the extension of an archive file: a JSONL export compressed with
// zstd, which convtrace import reads as it is.
const Ext = ".jsonl.zst"

// Result is what a run archived.
type Result struct {
	Threads int             `json:"threads"`
	Bytes   int64           `json:"bytes"` // of the files written
	Counts  transfer.Counts `json:"counts"`
	Files   []string        `json:"files"`
}

// Run archives the threads of project (every project when empty) whose
// last turn started before before: each is written to its own file under
// dir (Path), read back and checked against the database, and only then
// removed from it. progress, when not nil, hears of each thread done.
//
// A run cut short leaves every thread either in the database, or in a
// checked file and maybe still in the database: running again checks an
// existing file against the database, writes it again when it does not
// match, and removes the thread once it does. Nothing is lost or doubled.
// A thread that gets a turn while it is archived is caught by the check,
// which compares the file with the database as it is just before the
// removal; a turn arriving in the instant between that check and the
// removal would go with it.
func Run(ctx context.Context, db query.DB, dir string, before time.Time, project string, progress func(done, total int)) (Result, error) {
	store := query.New(db, 0, 0)
	threads, err := store.IdleThreads(ctx, uint64(before.UnixNano()), project)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for i, t := range threads {
		path := Path(dir, t.Project, t.ID)
		n, size, err := archiveThread(ctx, db, store, t.ID, path)
		if err != nil {
			return res, fmt.Errorf("archive thread %q: %w", t.ID, err)
		}
		res.Threads++
		res.Bytes += size
		res.Counts.Add(n)
		res.Files = append(res.Files, path)
		if progress != nil {
			progress(i+1, len(threads))
		}
	}
	return res, nil
}

// Path is the file a thread is archived to: dir/{project}/{thread}.jsonl.zst,
// each name escaped so that any id makes one file name inside dir.
func Path(dir, project, thread string) string {
	if project == "" {
		project = "%none" // no escaped name starts with a bare %
	}
	return filepath.Join(dir, fileName(project), fileName(thread)+Ext)
}

// fileName escapes s as one path segment: no separator, no leading dot,
// and a hash instead when it would be too long for a file name.
func fileName(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	if len(e) > 180 {
		sum := sha256.Sum256([]byte(s))
		e = "%sha256-" + hex.EncodeToString(sum[:])
	}
	return e
}

// archiveThread makes sure thread id is in a checked file at path, then
// removes it from the database.
func archiveThread(ctx context.Context, db query.DB, store query.Store, id, path string) (transfer.Counts, int64, error) {
	want, err := exportHash(ctx, db, id, io.Discard)
	if err != nil {
		return transfer.Counts{}, 0, err
	}
	got, err := readBack(path)
	if err != nil || got != want {
		// No file yet, or one that does not hold the thread as it is now.
		if err := write(ctx, db, id, path); err != nil {
			return transfer.Counts{}, 0, err
		}
		if got, err = readBack(path); err != nil {
			return transfer.Counts{}, 0, fmt.Errorf("read back %s: %w", path, err)
		}
	}
	// The database's side, as it is just before the removal.
	if want, err = exportHash(ctx, db, id, io.Discard); err != nil {
		return transfer.Counts{}, 0, err
	}
	size, err := store.ThreadSize(ctx, id)
	if err != nil {
		return transfer.Counts{}, 0, err
	}
	if got != want || uint64(got.counts.Turns) != size.Turns || uint64(got.counts.Notes) != size.Notes {
		return transfer.Counts{}, 0, fmt.Errorf("%s does not match the database (file %+v, database %+v turns and notes): not removed", path, got, size)
	}
	if _, err := store.DeleteThread(ctx, id, nil); err != nil {
		return transfer.Counts{}, 0, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return transfer.Counts{}, 0, err
	}
	return got.counts, info.Size(), nil
}

// digest is what a check compares: the records of an export but for its
// header line, which holds the time it was made, by hash and by count.
type digest struct {
	sum    string
	counts transfer.Counts
}

// exportHash exports thread id as JSONL to w and returns its digest.
func exportHash(ctx context.Context, db query.DB, id string, w io.Writer) (digest, error) {
	d := newDigester()
	if _, err := transfer.Export(ctx, db, io.MultiWriter(w, d), query.ExportFilter{ThreadID: id}, transfer.JSONL); err != nil {
		return digest{}, err
	}
	return d.digest()
}

// write exports thread id to path through a file beside it, renamed into
// place once whole and synced: path never holds half a file.
func write(ctx context.Context, db query.DB, id, path string) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".archive-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw, err := zstd.NewWriter(tmp)
	if err != nil {
		return err
	}
	if _, err := exportHash(ctx, db, id, zw); err != nil {
		zw.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readBack reads an archive file whole and returns its digest.
func readBack(path string) (digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return digest{}, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return digest{}, err
	}
	defer zr.Close()
	d := newDigester()
	if _, err := io.Copy(d, zr); err != nil {
		return digest{}, fmt.Errorf("decompress %s: %w", path, err)
	}
	return d.digest()
}

// digester hashes the lines of a JSONL export after its header and counts
// its records by type.
type digester struct {
	h      hash.Hash
	line   []byte
	lines  int
	counts transfer.Counts
	err    error
}

func newDigester() *digester { return &digester{h: sha256.New()} }

func (d *digester) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.line = append(d.line, p...)
			break
		}
		d.line = append(d.line, p[:i+1]...)
		d.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// endLine takes in one whole line.
func (d *digester) endLine() {
	d.lines++
	if d.lines > 1 {
		d.h.Write(d.line)
		var r struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(d.line, &r); err != nil && d.err == nil {
			d.err = fmt.Errorf("line %d: %w", d.lines, err)
		}
		switch r.Type {
		case "thread":
			d.counts.Threads++
		case "turn":
			d.counts.Turns++
		case "span":
			d.counts.Spans++
		case "note":
			d.counts.Notes++
		}
	}
	d.line = d.line[:0]
}

func (d *digester) digest() (digest, error) {
	if len(d.line) > 0 {
		return digest{}, errors.New("the export ends within a line")
	}
	if d.err != nil {
		return digest{}, d.err
	}
	if d.lines == 0 || d.counts.Threads != 1 {
		return digest{}, fmt.Errorf("an export of %d threads, want one", d.counts.Threads)
	}
	return digest{sum: hex.EncodeToString(d.h.Sum(nil)), counts: d.counts}, nil
}
