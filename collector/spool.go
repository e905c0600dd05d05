package collector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convtrace/convtrace/collector/mapping"
)

// spool keeps rows on disk: append-only segment files of records, each a
// length, a CRC-32C and the rows in msgpack (which, unlike gob or JSON,
// keeps a pointer to zero apart from nil, NaN and invalid UTF-8 as they
// are). A process locks (flock) the segment it appends to; another segment
// is replayed by the one process that locks it, then removed, so
// concurrent processes on one folder never store a segment twice.
type spool struct {
	dir    string
	logger *slog.Logger
	out    *os.File // the segment this process appends to, locked
	in     *os.File // the segment being replayed, locked
	inBuf  *bufio.Reader
	inOff  int64
	maybe  bool // whether a segment may wait to be replayed
}

const (
	spoolExt  = ".spool"
	maxRecord = 1 << 30 // larger lengths are damage, not records
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSpool(dir string, logger *slog.Logger) *spool {
	if dir == "" {
		return nil
	}
	return &spool{dir: dir, logger: logger, maybe: true}
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

// append writes r as one record and syncs it. A new segment is locked
// under a temporary name before it takes its own, so that no replayer
// opens it first.
func (s *spool) append(r rows) error {
	payload, err := msgpack.Marshal(&r)
	if err != nil {
		return fmt.Errorf("encode rows: %w", err)
	}
	if len(payload) > maxRecord {
		return fmt.Errorf("record of %d bytes is over %d", len(payload), maxRecord)
	}
	if s.out == nil {
		if s.out, err = s.create(); err != nil {
			return err
		}
	}
	rec := make([]byte, 8, 8+len(payload))
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	rec = append(rec, payload...)
	if _, err := s.out.Write(rec); err != nil {
		s.closeOut() // later records go to a new segment, not after a torn one
		return fmt.Errorf("write spool: %w", err)
	}
	if err := s.out.Sync(); err != nil {
		s.closeOut()
		return fmt.Errorf("sync spool: %w", err)
	}
	s.maybe = true
	return nil
}

func (s *spool) create() (*os.File, error) {
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
	if err := os.Rename(name+".tmp", name+spoolExt); err != nil {
		f.Close()
		return nil, fmt.Errorf("create spool: %w", err)
	}
	return f, nil
}

func (s *spool) pending() bool { return s != nil && s.maybe }

// next returns the next record to replay, oldest segment first, or nil when
// none waits. A segment is removed once read through, which the writer
// asks only after storing every record it returned. A torn or damaged
// record (a process killed mid-write) ends its segment with a warning.
func (s *spool) next() *rows {
	if s == nil {
		return nil
	}
	for {
		if s.in == nil && !s.openNext() {
			return nil
		}
		r, err := s.read()
		if err == nil {
			return r
		}
		if !errors.Is(err, io.EOF) {
			s.logger.Warn("convtrace: spool record damaged; the rest of its segment is skipped", "file", s.in.Name(), "offset", s.inOff, "err", err)
		}
		_ = os.Remove(s.in.Name())
		s.in.Close()
		s.in = nil
	}
}

// openNext locks the oldest segment no live process holds, replaying this
// process's own last.
func (s *spool) openNext() bool {
	if !s.maybe {
		return false
	}
	names, _ := filepath.Glob(filepath.Join(s.dir, "*"+spoolExt))
	sort.Strings(names)
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		fi, ferr := f.Stat()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || ferr != nil {
			f.Close() // appended to or replayed by a live process
			continue
		}
		// Replayed and removed by another process since the listing?
		if now, err := os.Stat(name); err != nil || !os.SameFile(fi, now) {
			f.Close()
			continue
		}
		s.in, s.inBuf, s.inOff = f, bufio.NewReader(f), 0
		return true
	}
	if s.out != nil {
		s.closeOut()
		return s.openNext()
	}
	s.maybe = false
	return false
}

// read decodes the record at the replay offset.
func (s *spool) read() (*rows, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(s.inBuf, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("torn record header")
		}
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n > maxRecord {
		return nil, fmt.Errorf("record length %d", n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(s.inBuf, payload); err != nil {
		return nil, fmt.Errorf("torn record: %w", err)
	}
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
		return nil, errors.New("checksum mismatch")
	}
	var r rows
	if err := msgpack.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("decode rows: %w", err)
	}
	s.inOff += int64(len(hdr)) + int64(n)
	return &r, nil
}

func (s *spool) closeOut() {
	s.out.Close()
	s.out = nil
}

// close releases the segments, leaving any not replayed for later.
func (s *spool) close() {
	if s == nil {
		return
	}
	if s.out != nil {
		s.closeOut()
	}
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
