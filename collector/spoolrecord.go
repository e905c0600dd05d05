package collector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/convtrace/convtrace/schema"
)

// A spool segment is a run of records: a 16-byte header (marker, payload
// length and CRC-32C, the header's own CRC-32C) and msgpack rows, so a
// reader resumes past damage at the next verified header. legacyExt
// segments are still read. The format: docs/design/writer.md.
const (
	segmentExt      = ".seg"
	legacyExt       = ".spool"
	headerLen       = 16
	legacyHeaderLen = 8
	maxRecord       = 1 << 30 // larger lengths are damage, not records

	// A record holds at most recordRows rows and, but for a single larger
	// row, recordBytes as sizeOf counts them, so damage costs few rows.
	recordRows  = 256
	recordBytes = 256 << 10
)

// recordMarker starts every record. 0xc1 is the one byte msgpack never
// writes as a type, so a marker inside a payload is rare, and the header's
// checksum rules it out.
var recordMarker = []byte{0xc1, 'c', 't', 'r'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeRecords returns r as records: its turns, then its spans, in pieces.
func encodeRecords(r rows) ([]byte, error) {
	var out []byte
	add := func(piece rows) error {
		payload, err := msgpack.Marshal(&piece)
		if err != nil {
			return fmt.Errorf("encode rows: %w", err)
		}
		if len(payload) > maxRecord {
			return fmt.Errorf("record of %d bytes is over %d", len(payload), maxRecord)
		}
		var hdr [headerLen]byte
		copy(hdr[:], recordMarker)
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(payload)))
		binary.LittleEndian.PutUint32(hdr[8:], crc32.Checksum(payload, castagnoli))
		binary.LittleEndian.PutUint32(hdr[12:], crc32.Checksum(hdr[:12], castagnoli))
		out = append(append(out, hdr[:]...), payload...)
		return nil
	}
	for _, t := range pieces(r.Turns, func(t []schema.Turn) int64 { return sizeOf(t, nil) }) {
		if err := add(rows{Turns: t}); err != nil {
			return nil, err
		}
	}
	for _, s := range pieces(r.Spans, func(s []schema.Span) int64 { return sizeOf(nil, s) }) {
		if err := add(rows{Spans: s}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pieces cuts rs, in order, into pieces of at most recordRows rows and
// recordBytes by size.
func pieces[T any](rs []T, size func([]T) int64) [][]T {
	var out [][]T
	start, bytes := 0, int64(0)
	for i := range rs {
		n := size(rs[i : i+1])
		if i > start && (i-start == recordRows || bytes+n > recordBytes) {
			out = append(out, rs[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(rs) {
		out = append(out, rs[start:])
	}
	return out
}

// recordReader reads the records of a segment that no one appends to.
type recordReader struct {
	f      *os.File
	size   int64
	legacy bool
	off    int64 // where the next record starts
}

// damage is bytes of a segment that hold no readable record.
type damage struct {
	start, end int64
	reason     string
}

func (d *damage) Error() string {
	return fmt.Sprintf("%s: %d bytes at offset %d", d.reason, d.end-d.start, d.start)
}

// next returns the rows of the record at r.off and moves past it; io.EOF at
// the segment's end; or a *damage up to the next record, having moved past
// it: a header that verifies gives the length to skip, else the next one
// found does (a legacy segment has no marker: its damage runs to the end).
func (r *recordReader) next() (*rows, error) {
	start := r.off
	if start >= r.size {
		return nil, io.EOF
	}
	payload, length, reason, err := r.read(start)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		var rs rows
		if err := msgpack.Unmarshal(payload, &rs); err == nil {
			r.off = start + length
			return &rs, nil
		}
		reason = "rows not decodable"
	}
	switch {
	case r.legacy:
		r.off = r.size
	case length > 0 && start+length <= r.size:
		r.off = start + length
	default:
		if r.off, err = r.resync(start + 1); err != nil {
			return nil, err
		}
	}
	return nil, &damage{start: start, end: r.off, reason: reason}
}

// read returns the payload of the record at off and its length with the
// header (0 unless the header verifies), or why there is no record there.
func (r *recordReader) read(off int64) (payload []byte, length int64, reason string, err error) {
	hdr := make([]byte, headerLen)
	if r.legacy {
		hdr = hdr[:legacyHeaderLen]
	}
	if _, err := r.f.ReadAt(hdr, off); err != nil {
		return nil, 0, "torn record header", ignoreEOF(err)
	}
	n, sum, ok := r.header(hdr)
	if !ok {
		return nil, 0, "no record header", nil
	}
	length = int64(len(hdr)) + int64(n)
	if length > r.size-off {
		return nil, length, "torn record", nil
	}
	payload = make([]byte, n)
	if _, err := r.f.ReadAt(payload, off+int64(len(hdr))); err != nil {
		return nil, length, "torn record", ignoreEOF(err)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, length, "checksum mismatch", nil
	}
	return payload, length, "", nil
}

// header decodes a record header: the payload's length and checksum, and
// whether it is a header at all.
func (r *recordReader) header(b []byte) (n, sum uint32, ok bool) {
	if r.legacy {
		n = binary.LittleEndian.Uint32(b)
		return n, binary.LittleEndian.Uint32(b[4:]), n <= maxRecord
	}
	n = binary.LittleEndian.Uint32(b[4:])
	ok = bytes.Equal(b[:4], recordMarker) && n <= maxRecord &&
		crc32.Checksum(b[:12], castagnoli) == binary.LittleEndian.Uint32(b[12:])
	return n, binary.LittleEndian.Uint32(b[8:]), ok
}

// resync returns the offset of the first header that verifies at or after
// off, or the segment's size when none does.
func (r *recordReader) resync(off int64) (int64, error) {
	buf, hdr := make([]byte, 64<<10), make([]byte, headerLen)
	for off < r.size {
		n, err := r.f.ReadAt(buf, off)
		if ignoreEOF(err) != nil {
			return 0, err
		}
		for i := 0; ; i++ {
			j := bytes.Index(buf[i:n], recordMarker)
			if j < 0 {
				break
			}
			i += j
			if _, err := r.f.ReadAt(hdr, off+int64(i)); err == nil {
				if _, _, ok := r.header(hdr); ok {
					return off + int64(i), nil
				}
			}
		}
		if n < len(buf) {
			break
		}
		off += int64(n - len(recordMarker) + 1) // a marker across the boundary is found next time
	}
	return r.size, nil
}

// ignoreEOF is err unless it says a read ended at the end of the file.
func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
