package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Bounds of decompression: a window larger than maxWindow, or past
// maxExpandFloor bytes an expansion over maxRatio, is refused as a bomb
// (docs/design/transfer.md says why these figures).
const (
	maxWindow      = 32 << 20
	maxRatio       = 5000
	maxExpandFloor = 16 << 20
)

// ErrTooLarge is an export larger, decompressed, than WithMaxSize allows.
var ErrTooLarge = errors.New("export too large")

// isZstd reports whether r, at its start, holds a zstd frame.
func isZstd(r *bufio.Reader) (bool, error) {
	head, err := r.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return false, fmt.Errorf("read the start: %w", err)
	}
	return bytes.Equal(head, zstdMagic), nil
}

// decompress returns what r decompresses to, within maxSize bytes (0: no
// bound) and maxRatio. Close releases the decoder.
func decompress(r io.Reader, maxSize int64) (io.ReadCloser, error) {
	in := &countingReader{r: r}
	zr, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return &boundedReader{zr: zr, in: in, maxSize: maxSize}, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundedReader is a zstd stream that fails once it expands past its
// bounds.
type boundedReader struct {
	zr      *zstd.Decoder
	in      *countingReader
	out     int64
	maxSize int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.zr.Read(p)
	b.out += int64(n)
	switch {
	case b.maxSize > 0 && b.out > b.maxSize:
		return n, fmt.Errorf("%w: more than %d MiB decompressed", ErrTooLarge, b.maxSize>>20)
	case b.out > maxExpandFloor && b.out > maxRatio*b.in.n:
		return n, fmt.Errorf("%w: %d bytes of zstd expand to more than %d: refused as a decompression bomb (at most %d times)",
			ErrInvalid, b.in.n, b.out, maxRatio)
	case errors.Is(err, zstd.ErrWindowSizeExceeded):
		return n, fmt.Errorf("%w: compressed with a window over %d MiB (zstd --ultra or --long): recompress it with zstd's defaults",
			ErrInvalid, maxWindow>>20)
	case err != nil && err != io.EOF:
		return n, fmt.Errorf("decompress: %w", err)
	}
	return n, err
}

func (b *boundedReader) Close() error {
	b.zr.Close()
	return nil
}
