package collector

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/time/rate"

	"github.com/convtrace/convtrace/collector/mapping"
)

// spool keeps rows on disk in segment files of checksummed records
// (spoolrecord.go). Each segment is replayed by the one process that locks
// it, and nothing is removed before it is stored or set aside in the
// damaged folder (docs/design/writer.md, "The spool").
type spool struct {
	dir      string
	logger   *slog.Logger
	maybe    atomic.Bool  // whether a segment may wait to be replayed
	setAside atomic.Int64 // bytes moved to the damaged folder
	warn     rate.Sometimes

	mu     sync.Mutex // guards what follows: journaling runs on the callers' goroutines
	out    *segment   // the segment appended to
	held   []*segment // full segments whose journaled rows are not all stored
	closed bool

	// Replay, on the writer goroutine only.
	in     *recordReader // the segment being replayed, locked
	inName string
	last   [2]int64        // the extent of the records next returned last
	skip   map[string]bool // segments left to a later process
}

// segment is one this process appends to, locked.
type segment struct {
	f        *os.File
	name     string
	size     int64
	inFlight int         // journaled items not stored yet
	released atomic.Bool // its rows wait for replay, not for the writer (which drops its copy); set under mu
}

const (
	segmentBytes = 8 << 20 // a segment this long takes no more records
	damagedDir   = "damaged"
)

func newSpool(dir string, logger *slog.Logger) *spool {
	if dir == "" {
		return nil
	}
	s := &spool{dir: dir, logger: logger, warn: rate.Sometimes{Interval: 10 * time.Second}, skip: map[string]bool{}}
	s.maybe.Store(true)
	return s
}

// SpoolSpans appends the rows of spans to the disk spool in dir, for a
// process that cannot deliver them now (convtrace run with its collector
// down); an exporter or ingester given WithSpool(dir) stores them when it
// starts, redacted as opts say. It returns how many rows it appended.
func SpoolSpans(dir string, spans []sdktrace.ReadOnlySpan, opts ...RedactOption) (int, error) {
	cfg, err := configure(opts, RedactOption.applySpool)
	if err != nil {
		return 0, err
	}
	r, _ := rowsOf(&mapping.SDKReader{}, spans)
	newRedactor(cfg.redact, cfg.redactExtra).rows(r.Turns, r.Spans)
	s := newSpool(dir, slog.Default())
	defer s.close()
	if err := s.append(r); err != nil {
		return 0, err
	}
	return r.len(), nil
}

// append writes rows that have no other copy, for replay.
func (s *spool) append(r rows) error {
	recs, err := encodeRecords(r)
	if err != nil || len(recs) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seg, err := s.write(recs)
	if err == nil {
		s.release(seg)
	}
	return err
}

// write appends records to the segment appended to, creating it, and
// syncs it (mu held). A segment that fails a write, or is full, takes no
// more.
func (s *spool) write(recs []byte) (*segment, error) {
	var err error
	if s.out == nil {
		if s.out, err = s.create(); err != nil {
			return nil, err
		}
	}
	seg := s.out
	_, err = seg.f.Write(recs)
	if err == nil {
		err = seg.f.Sync()
	}
	if err != nil {
		s.release(seg)
		s.forget(seg) // what it held before is replayed; a torn tail set aside
		return nil, fmt.Errorf("write spool: %w", err)
	}
	if seg.size += int64(len(recs)); seg.size >= segmentBytes {
		s.out = nil
		if seg.released.Load() {
			seg.f.Close() // to be replayed
		} else {
			s.held = append(s.held, seg)
		}
	}
	return seg, nil
}

// create makes a segment, locked under a temporary name before it takes
// its own so that no replayer opens it first, its name synced.
func (s *spool) create() (*segment, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	name := filepath.Join(s.dir, fmt.Sprintf("%020d-%d", time.Now().UnixNano(), os.Getpid()))
	f, err := os.OpenFile(name+".tmp", os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock spool: %w", err)
	}
	if err := os.Rename(name+".tmp", name+segmentExt); err != nil {
		f.Close()
		return nil, fmt.Errorf("create spool: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("create spool: %w", err)
	}
	return &segment{f: f, name: name + segmentExt}, nil
}

func (s *spool) pending() bool { return s != nil && s.maybe.Load() }

// next returns rows to replay, up to about max: records of one segment,
// oldest segment first; nil when none waits. Damaged bytes are set aside
// as they are met. A segment read through is removed by the call after
// the one that returned its last records: the writer calls again only
// once it stored them.
func (s *spool) next(max int) *rows {
	if s == nil {
		return nil
	}
	for s.in != nil || s.openNext() {
		batch, err := s.gather(max)
		if batch.len() > 0 {
			return &batch
		}
		if !errors.Is(err, io.EOF) {
			s.leave(err)
			continue
		}
		_ = os.Remove(s.inName)
		s.in.f.Close()
		s.in = nil
	}
	return nil
}

// gather reads records of the segment being replayed up to max rows,
// setting damaged bytes aside, and returns the error that stopped it:
// io.EOF at the segment's end.
func (s *spool) gather(max int) (rows, error) {
	var batch rows
	s.last = [2]int64{s.in.off, s.in.off}
	for batch.len() < max {
		r, err := s.in.next()
		var d *damage
		switch {
		case err == nil:
			batch.Turns, batch.Spans = append(batch.Turns, r.Turns...), append(batch.Spans, r.Spans...)
			s.last[1] = s.in.off
		case errors.As(err, &d):
			if err := s.moveAside(d.start, d.end, "damaged", d.reason); err != nil {
				s.in.off = d.start // met again, and the segment left
				return batch, err
			}
			if batch.len() == 0 {
				s.last = [2]int64{s.in.off, s.in.off}
			}
		default:
			return batch, err
		}
	}
	return batch, nil
}

// refused sets aside the records next returned last, which storage
// refused for good, instead of removing them with their segment.
func (s *spool) refused(reason error) {
	if err := s.moveAside(s.last[0], s.last[1], "refused", reason.Error()); err != nil {
		s.in.off = s.last[0]
		s.leave(err)
	}
}

// moveAside copies bytes [start, end) of the segment being replayed to the
// damaged folder, as <segment>.<offset>.<kind>, synced.
func (s *spool) moveAside(start, end int64, kind, reason string) error {
	dir := filepath.Join(s.dir, damagedDir)
	name := filepath.Join(dir, fmt.Sprintf("%s.%d.%s", filepath.Base(s.inName), start, kind))
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = writeFile(name, io.NewSectionReader(s.in.f, start, end-start))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("set aside %s bytes of %s: %w", kind, s.inName, err)
	}
	s.setAside.Add(end - start)
	s.logger.Warn("convtrace: spool bytes set aside", "kind", kind, "reason", reason, "segment", s.inName,
		"offset", start, "bytes", end-start, "kept", name, "set_aside_total", s.setAside.Load())
	return nil
}

// leave stops replaying the segment, leaving it whole to a later process.
func (s *spool) leave(err error) {
	s.logger.Error("convtrace: spool segment left for a later process", "segment", s.inName, "err", err)
	s.skip[s.inName] = true
	s.in.f.Close()
	s.in = nil
}

// openNext locks the oldest segment no live process holds, replaying this
// process's own last.
func (s *spool) openNext() bool {
	for s.maybe.Swap(false) {
		if s.openOldest() {
			s.maybe.Store(true) // more may wait behind it
			return true
		}
		s.mu.Lock()
		if s.out != nil && s.out.released.Load() {
			s.forget(s.out)
			s.maybe.Store(true)
		}
		s.mu.Unlock()
	}
	return false
}

func (s *spool) openOldest() bool {
	names, _ := filepath.Glob(filepath.Join(s.dir, "*"+segmentExt))
	legacy, _ := filepath.Glob(filepath.Join(s.dir, "*"+legacyExt))
	names = append(names, legacy...)
	sort.Strings(names) // by the time in their names
	for _, name := range names {
		if s.skip[name] {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // appended to or replayed by a live process
			continue
		}
		// Its size once locked: no one appends to it any more. Replayed and
		// removed by another process since the listing?
		fi, err := f.Stat()
		if now, nerr := os.Stat(name); err != nil || nerr != nil || !os.SameFile(fi, now) {
			f.Close()
			continue
		}
		s.in, s.inName = &recordReader{f: f, size: fi.Size(), legacy: strings.HasSuffix(name, legacyExt)}, name
		return true
	}
	return false
}

// close releases the segments, leaving what they hold for later.
func (s *spool) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	if s.out != nil {
		s.forget(s.out)
	}
	for len(s.held) > 0 {
		s.forget(s.held[0])
	}
	s.mu.Unlock()
	if s.in != nil {
		s.in.f.Close()
		s.in = nil
	}
}

func (s *spool) setAsideBytes() int64 {
	if s == nil {
		return 0
	}
	return s.setAside.Load()
}

// writeFile writes r to name, synced.
func writeFile(name string, r io.Reader) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// syncDir makes the names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
