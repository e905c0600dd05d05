package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLine is the longest JSONL line an import reads: a turn of the
// largest content validTurn takes, every byte escaped, fits.
const maxLine = 6*maxContent + 1<<20

// item is one record read from an export, with where it was: a JSONL line
// number, or a JSON path and byte offset.
type item struct {
	rec    record
	line   int64
	path   string
	offset int64
}

func (it *item) where() string {
	if it.path != "" {
		return fmt.Sprintf("%s (byte %d)", it.path, it.offset)
	}
	return fmt.Sprintf("line %d", it.line)
}

// readEnvelope reads a JSON envelope from r a value at a time, calling
// emit with each thread, turn, span and note, in order, and returns its
// schemaVersion (0 when it has none). A syntax error, a field it does not
// know or a record of the wrong shape ends it.
func readEnvelope(r io.Reader, emit func(*item) error) (version int, err error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	dec.UseNumber()
	fail := func(what string, err error) error {
		return fmt.Errorf("%w: %s (byte %d): %v", ErrInvalid, what, dec.InputOffset(), err)
	}
	if err := delim(dec, '{'); err != nil {
		return 0, fail("envelope", err)
	}
	for dec.More() {
		key, err := fieldName(dec)
		if err != nil {
			return version, fail("envelope", err)
		}
		switch key {
		case "schemaVersion":
			if err := dec.Decode(&version); err != nil {
				return version, fail("schemaVersion", err)
			}
			if err := checkVersion(version); err != nil {
				return version, err
			}
		case "exportedAt":
			var at string
			if err := dec.Decode(&at); err != nil {
				return version, fail("exportedAt", err)
			}
		case "threads":
			if err := readThreads(dec, emit); err != nil {
				return version, err
			}
		default:
			return version, fail("envelope", fmt.Errorf("unknown field %q", key))
		}
	}
	if err := delim(dec, '}'); err != nil {
		return version, fail("envelope", err)
	}
	var syntax *json.SyntaxError
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return version, nil
	case err != nil && !errors.As(err, &syntax):
		return version, err // reading failed: too large, say
	}
	return version, fail("envelope", errors.New("more data after the envelope"))
}

// readThreads reads the envelope's threads array.
func readThreads(dec *json.Decoder, emit func(*item) error) error {
	fail := func(path string, err error) error {
		return fmt.Errorf("%w: %s (byte %d): %v", ErrInvalid, path, dec.InputOffset(), err)
	}
	if err := delim(dec, '['); err != nil {
		return fail("threads", err)
	}
	for i := 0; dec.More(); i++ {
		path := fmt.Sprintf("threads[%d]", i)
		if err := delim(dec, '{'); err != nil {
			return fail(path, err)
		}
		first := true
		for dec.More() {
			key, err := fieldName(dec)
			if err != nil {
				return fail(path, err)
			}
			if first != (key == "thread") {
				return fail(path, errors.New(`"thread" must come first, and once`))
			}
			first = false
			if key == "thread" {
				it := &item{rec: record{Type: typeThread}, path: path + ".thread", offset: dec.InputOffset()}
				if err := dec.Decode(&it.rec.Thread); err != nil {
					return fail(it.path, err)
				}
				if err := emit(it); err != nil {
					return err
				}
				continue
			}
			typ, ok := map[string]string{"turns": typeTurn, "spans": typeSpan, "notes": typeNote}[key]
			if !ok {
				return fail(path, fmt.Errorf("unknown field %q", key))
			}
			if err := readArray(dec, path+"."+key, typ, emit); err != nil {
				return err
			}
		}
		if err := delim(dec, '}'); err != nil {
			return fail(path, err)
		}
	}
	if err := delim(dec, ']'); err != nil {
		return fail("threads", err)
	}
	return nil
}

// readArray reads an array of a thread's records of one type.
func readArray(dec *json.Decoder, path, typ string, emit func(*item) error) error {
	if err := delim(dec, '['); err != nil {
		return fmt.Errorf("%w: %s (byte %d): %v", ErrInvalid, path, dec.InputOffset(), err)
	}
	for j := 0; dec.More(); j++ {
		it := &item{rec: record{Type: typ}, path: fmt.Sprintf("%s[%d]", path, j), offset: dec.InputOffset()}
		var err error
		switch typ {
		case typeTurn:
			err = dec.Decode(&it.rec.Turn)
		case typeSpan:
			err = dec.Decode(&it.rec.Span)
		case typeNote:
			err = dec.Decode(&it.rec.Note)
		}
		if err == nil && it.rec.Turn == nil && it.rec.Span == nil && it.rec.Note == nil {
			err = errors.New("null")
		}
		if err != nil {
			return fmt.Errorf("%w: %s (byte %d): %v", ErrInvalid, it.path, it.offset, err)
		}
		if err := emit(it); err != nil {
			return err
		}
	}
	if err := delim(dec, ']'); err != nil {
		return fmt.Errorf("%w: %s (byte %d): %v", ErrInvalid, path, dec.InputOffset(), err)
	}
	return nil
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("found %v where %q belongs", tok, want)
	}
	return nil
}

func fieldName(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("found %v where a field name belongs", tok)
	}
	return key, nil
}

// lineReader reads JSONL lines of at most maxLine bytes; a longer line is
// skipped and reported, not a reason to stop.
type lineReader struct {
	r    *bufio.Reader
	line int64
	buf  []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line without its end, errTooLong for a line over
// maxLine, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	long := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !long {
			l.buf = append(l.buf, chunk...)
			if len(l.buf) > maxLine {
				long, l.buf = true, l.buf[:0]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(chunk) == 0 && len(l.buf) == 0 && !long {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read line %d: %w", l.line+1, err)
		}
		l.line++
		if long {
			return nil, errTooLong
		}
		return bytes.TrimRight(l.buf, "\r\n"), nil
	}
}

var errTooLong = fmt.Errorf("longer than %d bytes", maxLine)

// decodeLine decodes one JSONL record, which must hold the part its type
// names and no other.
func decodeLine(b []byte) (record, error) {
	var rec record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, err
	}
	if dec.More() {
		return rec, errors.New("more than one JSON value")
	}
	parts := map[string]bool{
		typeHeader: rec.SchemaVersion != nil, typeThread: rec.Thread != nil, typeTurn: rec.Turn != nil,
		typeSpan: rec.Span != nil, typeNote: rec.Note != nil,
	}
	has, ok := parts[rec.Type]
	if !ok {
		return rec, fmt.Errorf("type %q is not one of header, thread, turn, span, note", rec.Type)
	}
	for typ, set := range parts {
		if set && typ != rec.Type {
			return rec, fmt.Errorf("a %s record holds a %q field", rec.Type, typ)
		}
	}
	if !has {
		return rec, fmt.Errorf("a %s record without its %q field", rec.Type, rec.Type)
	}
	if rec.Type != typeHeader && rec.ExportedAt != "" {
		return rec, fmt.Errorf("a %s record holds exportedAt", rec.Type)
	}
	return rec, nil
}

// isHeader reports whether b, a first line, is a JSONL header.
func isHeader(b []byte) bool {
	rec, err := decodeLine(b)
	return err == nil && rec.Type == typeHeader || strings.Contains(string(b), `"type":"header"`)
}
