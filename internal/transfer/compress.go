package transfer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Decompress returns an export read from r as it was written: r itself,
// or, when r is zstd-compressed (an archive file of convtrace archive),
// what it decompresses to, with name less its .zst. Close releases the
// decoder.
func Decompress(r io.Reader, name string) (io.ReadCloser, string, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return nil, "", fmt.Errorf("read the start of %s: %w", name, err)
	}
	if !bytes.Equal(head, zstdMagic) {
		return io.NopCloser(br), name, nil
	}
	zr, err := zstd.NewReader(br)
	if err != nil {
		return nil, "", fmt.Errorf("decompress %s: %w", name, err)
	}
	return zr.IOReadCloser(), strings.TrimSuffix(name, ".zst"), nil
}
