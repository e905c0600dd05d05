package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/failpoint"
	"github.com/convtrace/convtrace/store/transfer"
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

// Run archives the threads of project (every project when empty) whose last
// turn started before before: each is written to its file under dir (Path),
// checked against the database, then removed from it; a killed run is finished
// by the next (docs/design/removal.md). progress, when not nil, hears of each thread done.
func Run(ctx context.Context, db store.DB, dir string, before time.Time, project string, progress func(done, total int)) (Result, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	removeTemps(dir)
	st := store.New(db, 0, 0)
	j := journal{path: filepath.Join(dir, journalName)}
	if err := j.finish(ctx, db, st); err != nil {
		return Result{}, err
	}
	threads, err := st.IdleThreads(ctx, uint64(before.UnixNano()), project)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for i, t := range threads {
		path := Path(dir, t.Project, t.ID)
		n, size, err := archiveThread(ctx, db, st, j, t.ID, path)
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

// Failpoints of an archive run (package failpoint), in their order for
// one thread.
const (
	FailWritten   = "archive.written"   // a merged file written, not yet in place
	FailPlaced    = "archive.placed"    // the file in place, the removal not journaled
	FailJournaled = "archive.journaled" // the removal journaled, not started
	FailRemoved   = "archive.removed"   // the thread removed, still journaled
)

// archiveThread makes sure thread id is in a checked file at path, then
// removes it from the database.
func archiveThread(ctx context.Context, db store.DB, st store.Store, j journal, id, path string) (transfer.Counts, int64, error) {
	if err := place(ctx, db, id, path); err != nil {
		return transfer.Counts{}, 0, err
	}
	failpoint.Hit(FailPlaced)
	if err := j.add(id, path); err != nil {
		return transfer.Counts{}, 0, err
	}
	failpoint.Hit(FailJournaled)
	got, err := remove(ctx, db, st, id, path)
	if err != nil {
		return transfer.Counts{}, 0, err
	}
	failpoint.Hit(FailRemoved)
	if err := j.done(id); err != nil {
		return transfer.Counts{}, 0, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return transfer.Counts{}, 0, err
	}
	return got.counts, info.Size(), nil
}

// place makes the file at path hold every record the database has of
// thread id and every record the file held before: the file as it is when
// it does, else a merged file written beside it, checked, and renamed over
// it.
func place(ctx context.Context, db store.DB, id, path string) error {
	old, err := readBack(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Damaged since it was written: kept beside, for inspection,
		// never overwritten; a new file is written from the database.
		aside := fmt.Sprintf("%s.damaged-%d", path, time.Now().UnixNano())
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("%s is not a readable archive (%v) and cannot be set aside: %w", path, err, rerr)
		}
	}
	exists := err == nil
	if exists {
		now, err := exportDigest(ctx, db, id, io.Discard)
		if err != nil {
			return err
		}
		if old.holds(now) {
			return nil
		}
	}
	return write(ctx, db, id, path, exists)
}

// remove removes thread id from the database once the file at path holds
// every record the database has of it, as it is just before the removal.
func remove(ctx context.Context, db store.DB, st store.Store, id, path string) (digest, error) {
	got, err := readBack(path)
	if err != nil {
		return digest{}, fmt.Errorf("read back %s: %w", path, err)
	}
	want, err := exportDigest(ctx, db, id, io.Discard)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Its turns are gone already (a removal cut short): what is
		// left goes, summaries included.
	case err != nil:
		return digest{}, err
	case !got.holds(want):
		return digest{}, fmt.Errorf("%s does not hold the thread as the database has it (file %+v, database %+v): not removed", path, got.counts, want.counts)
	}
	// A deletion a cut-short run submitted may finish between the check
	// and this one, leaving nothing to remove: that is done too.
	if _, err := st.DeleteThread(ctx, id, nil); err != nil && !errors.Is(err, store.ErrNotFound) {
		return digest{}, err
	}
	return got, nil
}

// exportDigest exports thread id as JSONL to w and returns its digest.
func exportDigest(ctx context.Context, db store.DB, id string, w io.Writer) (digest, error) {
	d := newDigester(nil)
	if _, err := transfer.Export(ctx, db, io.MultiWriter(w, d), store.ExportFilter{ThreadID: id}, transfer.JSONL); err != nil {
		return digest{}, err
	}
	return d.digest()
}

// write exports thread id to path through a file beside it, renamed into
// place once whole, synced and checked: path never holds half a file, nor
// less than it held. With merge, the records of the file at path that the
// database no longer has (those of an earlier archive of the thread) follow
// the database's.
func write(ctx context.Context, db store.DB, id, path string, merge bool) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix+"*")
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
	keys := map[string]bool{}
	d := newDigester(func(line []byte, key string) { keys[key] = true })
	if _, err := transfer.Export(ctx, db, io.MultiWriter(zw, d), store.ExportFilter{ThreadID: id}, transfer.JSONL); err != nil {
		zw.Close()
		return err
	}
	now, err := d.digest()
	if err != nil {
		zw.Close()
		return err
	}
	var old digest
	if merge {
		if old, err = appendOld(path, zw, keys); err != nil {
			zw.Close()
			return err
		}
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
	failpoint.Hit(FailWritten)
	got, err := readBack(tmp.Name())
	if err != nil {
		return fmt.Errorf("read back %s: %w", tmp.Name(), err)
	}
	if !got.holds(now) || !got.holdsKeys(old) {
		return fmt.Errorf("the file written for %s does not hold the thread and its earlier archive: %s left as it was", id, path)
	}
	return os.Rename(tmp.Name(), path)
}

// appendOld writes to w the records of the archive at path whose keys
// the new export does not have (the thread record and header aside), and
// returns the old file's digest, its records by key.
func appendOld(path string, w io.Writer, keys map[string]bool) (digest, error) {
	var werr error
	d := newDigester(func(line []byte, key string) {
		if !keys[key] && werr == nil {
			_, werr = w.Write(line)
		}
	})
	if err := decompress(path, d); err != nil {
		return digest{}, err
	}
	if werr != nil {
		return digest{}, werr
	}
	return d.digest()
}

// readBack reads an archive file whole and returns its digest.
func readBack(path string) (digest, error) {
	d := newDigester(nil)
	if err := decompress(path, d); err != nil {
		return digest{}, err
	}
	return d.digest()
}

// decompress writes the archive at path, decompressed, to w.
func decompress(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	if _, err := io.Copy(w, zr); err != nil {
		return fmt.Errorf("decompress %s: %w", path, err)
	}
	return nil
}
