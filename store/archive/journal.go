package archive

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/convtrace/convtrace/store"
)

// Names in an archive folder beside the projects' folders (whose escaped
// names never start with a dot).
const (
	journalName = ".journal"
	lockName    = ".lock"
	tempPrefix  = ".archive-"
)

// journal lists the removals begun and not known to be done: one JSON
// line {"thread", "path"} each, the file rewritten whole (through a
// renamed temporary file) at every change.
type journal struct{ path string }

type removal struct {
	Thread string `json:"thread"`
	Path   string `json:"path"`
}

func (j journal) read() ([]removal, error) {
	f, err := os.Open(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []removal
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r removal
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// Only a line cut by a crash mid-write can be damaged,
			// and writes replace the file whole: refuse to guess.
			return nil, fmt.Errorf("archive journal %s: %w", j.path, err)
		}
		rs = append(rs, r)
	}
	return rs, sc.Err()
}

func (j journal) write(rs []removal) error {
	if len(rs) == 0 {
		if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	var b strings.Builder
	for _, r := range rs {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	tmp := j.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, j.path)
}

// add journals the removal of thread, whose archive is at path.
func (j journal) add(thread, path string) error {
	rs, err := j.read()
	if err != nil {
		return err
	}
	return j.write(append(rs, removal{Thread: thread, Path: path}))
}

// done takes the removal of thread out of the journal.
func (j journal) done(thread string) error {
	rs, err := j.read()
	if err != nil {
		return err
	}
	kept := rs[:0]
	for _, r := range rs {
		if r.Thread != thread {
			kept = append(kept, r)
		}
	}
	return j.write(kept)
}

// finish completes the removals a run cut short: each thread's file is
// checked against what the database still has of it, which then goes.
func (j journal) finish(ctx context.Context, db store.DB, st store.Store) error {
	rs, err := j.read()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if _, err := remove(ctx, db, st, r.Thread, r.Path); err != nil {
			return fmt.Errorf("finish the removal of archived thread %q: %w", r.Thread, err)
		}
		if err := j.done(r.Thread); err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes dir for this run: one archive run at a time per folder.
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another archive run is using %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// removeTemps removes the temporary files of runs killed while writing:
// under the lock no other run writes one, and none is an archive.
func removeTemps(dir string) {
	temps, _ := filepath.Glob(filepath.Join(dir, "*", tempPrefix+"*"))
	for _, t := range temps {
		os.Remove(t)
	}
	os.Remove(filepath.Join(dir, journalName+".tmp"))
}
