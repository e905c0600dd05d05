package transfer

import (
	"errors"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer/query"
)

// SchemaVersion is the version of the export format this package writes,
// and the newest it reads. A change that an older reader would misread
// (a field renamed, a meaning changed) takes a new version; a new column
// does too, since a reader refuses fields it does not know rather than
// drop them.
const SchemaVersion = 1

// Format is how an export is written: one JSON envelope, or JSON lines.
type Format string

// The formats. JSON is one envelope {"schemaVersion", "exportedAt",
// "threads": [{"thread", "turns", "spans", "notes"}]}; JSONL is a header
// line, then one record a line, each thread's records after its thread
// record (README, "Export and import").
const (
	JSON  Format = "json"
	JSONL Format = "jsonl"
)

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case JSON, JSONL:
		return f, nil
	}
	return "", errors.New("not json or jsonl")
}

// ErrInvalid is what an import refuses: a file that is not an export, or
// one of a schemaVersion this convtrace does not read. Errors wrap it
// with where and why.
var ErrInvalid = errors.New("invalid export")

// Turn is a turn as an export carries it: every column of conversations,
// the content whole. schema.Turn's JSON leaves out two columns that only
// the writer and readers use (and History, which an export never holds:
// an import splits the history off again); Turn adds them.
type Turn struct {
	schema.Turn
	HeartbeatNS uint64 `json:"heartbeat_ns"`
	Revision    uint64 `json:"revision"`
}

// row is the conversations row of t.
func (t *Turn) row() schema.Turn {
	r := t.Turn
	r.HeartbeatNS, r.Revision, r.History = t.HeartbeatNS, t.Revision, nil
	return r
}

// record is one line of a JSONL export; the field its Type names is set.
type record struct {
	Type          string              `json:"type"`
	SchemaVersion *int                `json:"schemaVersion,omitempty"`
	ExportedAt    string              `json:"exportedAt,omitempty"`
	Thread        *query.ThreadRecord `json:"thread,omitempty"`
	Turn          *Turn               `json:"turn,omitempty"`
	Span          *schema.Span        `json:"span,omitempty"`
	Note          *query.Note         `json:"note,omitempty"`
}

// Record types of a JSONL export.
const (
	typeHeader = "header"
	typeThread = "thread"
	typeTurn   = "turn"
	typeSpan   = "span"
	typeNote   = "note"
)

// Counts are rows of an export or an import by table.
type Counts struct {
	Threads int64 `json:"threads"`
	Turns   int64 `json:"turns"`
	Spans   int64 `json:"spans"`
	Notes   int64 `json:"notes"`
}

func (c *Counts) add(o Counts) {
	c.Threads += o.Threads
	c.Turns += o.Turns
	c.Spans += o.Spans
	c.Notes += o.Notes
}
