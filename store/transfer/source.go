package transfer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
)

// source is an export to read, from its start on every pass: its first
// line may tell its format, and a JSON envelope is read twice.
type source struct {
	rs      io.ReadSeeker
	name    string // less its .zst
	zstd    bool
	maxSize int64 // decompressed; 0: no bound
	size    int64 // the most the export can be, decompressed
}

func newSource(rs io.ReadSeeker, name string, maxSize int64) (*source, error) {
	size, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	s := &source{rs: rs, name: name, maxSize: maxSize, size: size}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	if s.zstd, err = isZstd(bufio.NewReader(rs)); err != nil {
		return nil, err
	}
	switch {
	case s.zstd && maxSize > 0:
		s.name, s.size = strings.TrimSuffix(name, ".zst"), maxSize
	case s.zstd:
		s.name, s.size = strings.TrimSuffix(name, ".zst"), math.MaxInt64
	case maxSize > 0 && size > maxSize:
		return nil, fmt.Errorf("%w: more than %d MiB", ErrTooLarge, maxSize>>20)
	}
	return s, nil
}

// open reads the export from its start, decompressed.
func (s *source) open() (io.ReadCloser, error) {
	if _, err := s.rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	if s.zstd {
		return decompress(s.rs, s.maxSize)
	}
	return io.NopCloser(s.rs), nil
}

// read calls f with the export, read from its start.
func (s *source) read(f func(io.Reader) error) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	defer r.Close()
	return f(r)
}

// format tells the export's format: by its name's extension (.json,
// .jsonl, .ndjson), else by its first line, which is a JSONL header or
// the start of an envelope.
func (s *source) format() (Format, error) {
	switch strings.ToLower(filepath.Ext(s.name)) {
	case ".json":
		return JSON, nil
	case ".jsonl", ".ndjson":
		return JSONL, nil
	}
	var line []byte
	err := s.read(func(r io.Reader) (err error) {
		line, err = newLineReader(r).next()
		return err
	})
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errTooLong) {
		return "", err
	}
	if err == nil && isHeader(line) {
		return JSONL, nil
	}
	return JSON, nil
}
