package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress bars are drawn by github.com/schollz/progressbar: well kept,
// no dependency beyond the terminal packages, throttled redraws, and a
// reader wrapper for byte counts. They are shown on stderr only when it
// is a terminal, and only for large sets: scripts and pipes see nothing.

// terminal reports whether w is a terminal.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newBar returns a bar of total units on w, or nil when w is not a
// terminal or the set is small. A nil bar draws nothing.
func newBar(w io.Writer, total, large int64, what string, bytes bool) *progressbar.ProgressBar {
	if total < large || !terminal(w) {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(bytes),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { _, _ = io.WriteString(w, "\n") }),
	)
}

// barReader counts the bytes read from a file on a bar, and starts the
// bar again when the file is read again from its start (an import reads
// a JSON envelope twice: to check it, then to store it).
type barReader struct {
	*os.File
	bar *progressbar.ProgressBar
}

func (r barReader) Read(p []byte) (int, error) {
	n, err := r.File.Read(p)
	if r.bar != nil {
		_ = r.bar.Add(n)
	}
	return n, err
}

func (r barReader) Seek(offset int64, whence int) (int64, error) {
	pos, err := r.File.Seek(offset, whence)
	if r.bar != nil && err == nil && pos == 0 {
		r.bar.Reset()
		r.bar.Describe("storing")
	}
	return pos, err
}
