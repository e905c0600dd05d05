package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/convtrace/convtrace/store/transfer"
)

// digest is what a check compares: the records of an export but for its
// header line, which holds the time it was made, each by the hash of its
// line, and how many of each type.
type digest struct {
	lines  map[[16]byte]bool
	keys   map[string]bool
	counts transfer.Counts
}

// holds reports whether every record of o is one of d's.
func (d digest) holds(o digest) bool {
	for h := range o.lines {
		if !d.lines[h] {
			return false
		}
	}
	return true
}

// holdsKeys reports whether d has a record of every key of o's: a turn,
// span or note, in its newest form or the one o had.
func (d digest) holdsKeys(o digest) bool {
	for k := range o.keys {
		if !d.keys[k] {
			return false
		}
	}
	return true
}

// digester reads the lines of a JSONL export after its header: it keeps
// each record's line hash and key and counts records by type; each, when
// set, is told every record line with its key.
type digester struct {
	line  []byte
	lines int
	d     digest
	each  func(line []byte, key string)
	err   error
}

func newDigester(each func(line []byte, key string)) *digester {
	return &digester{d: digest{lines: map[[16]byte]bool{}, keys: map[string]bool{}}, each: each}
}

func (d *digester) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.line = append(d.line, p...)
			break
		}
		d.line = append(d.line, p[:i+1]...)
		d.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// record is what a digest reads of a record: its type and key.
type record struct {
	Type string `json:"type"`
	Turn *struct {
		TurnID  string `json:"turn_id"`
		StartNS uint64 `json:"start_ns"`
	} `json:"turn"`
	Span *struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
		StartNS uint64 `json:"start_ns"`
	} `json:"span"`
	Note *struct {
		TurnID    string `json:"turn_id"`
		UpdatedNS uint64 `json:"updated_ns"`
	} `json:"note"`
}

// key names the row a record is: a turn or span by its sort key, a note
// by its turn and version, the thread record by its type.
func (r record) key() string {
	switch {
	case r.Type == "turn" && r.Turn != nil:
		return fmt.Sprintf("turn %d %s", r.Turn.StartNS, r.Turn.TurnID)
	case r.Type == "span" && r.Span != nil:
		return fmt.Sprintf("span %d %s %s", r.Span.StartNS, r.Span.TraceID, r.Span.SpanID)
	case r.Type == "note" && r.Note != nil:
		return fmt.Sprintf("note %d %s", r.Note.UpdatedNS, r.Note.TurnID)
	}
	return r.Type
}

// endLine takes in one whole line.
func (d *digester) endLine() {
	d.lines++
	if d.lines > 1 {
		var r record
		if err := json.Unmarshal(d.line, &r); err != nil && d.err == nil {
			d.err = fmt.Errorf("line %d: %w", d.lines, err)
		}
		sum := sha256.Sum256(d.line)
		d.d.lines[[16]byte(sum[:16])] = true
		key := r.key()
		d.d.keys[key] = true
		switch r.Type {
		case "thread":
			d.d.counts.Threads++
		case "turn":
			d.d.counts.Turns++
		case "span":
			d.d.counts.Spans++
		case "note":
			d.d.counts.Notes++
		}
		if d.each != nil {
			d.each(d.line, key)
		}
	}
	d.line = d.line[:0]
}

func (d *digester) digest() (digest, error) {
	if len(d.line) > 0 {
		return digest{}, errors.New("the export ends within a line")
	}
	if d.err != nil {
		return digest{}, d.err
	}
	if d.lines == 0 || d.d.counts.Threads != 1 {
		return digest{}, fmt.Errorf("an export of %d threads, want one", d.d.counts.Threads)
	}
	return d.d, nil
}
