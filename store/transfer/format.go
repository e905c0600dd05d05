package transfer

import (
	"errors"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
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
// the content whole. schema.Turn's JSON leaves out three columns that
// only the writer and readers use; Turn adds them, history as the number
// of the prompt's first messages the source stored once (the ids are the
// messages' hashes: an import computes them again).
type Turn struct {
	schema.Turn
	HistoryMessages uint32 `json:"history_messages"`
	HeartbeatNS     uint64 `json:"heartbeat_ns"`
	Revision        uint64 `json:"revision"`
}

// exportTurn is the export's record of a conversations row whose content
// is whole.
func exportTurn(r *schema.Turn) *Turn {
	t := &Turn{Turn: *r, HistoryMessages: uint32(len(r.History)), HeartbeatNS: r.HeartbeatNS, Revision: r.Revision}
	t.Turn.History = nil
	return t
}

// row is the conversations row of t, to be stored as the source stored
// it: a prompt whose history it stored once is split again, as the
// writer splits it (nil History), any other is kept whole (an empty one).
func (t *Turn) row() schema.Turn {
	r := t.Turn
	r.HeartbeatNS, r.Revision, r.History = t.HeartbeatNS, t.Revision, []string{}
	if t.HistoryMessages > 0 {
		r.History = nil
	}
	return r
}

// record is one line of a JSONL export; the field its Type names is set.
type record struct {
	Type          string              `json:"type"`
	SchemaVersion *int                `json:"schemaVersion,omitempty"`
	ExportedAt    string              `json:"exportedAt,omitempty"`
	Thread        *store.ThreadRecord `json:"thread,omitempty"`
	Turn          *Turn               `json:"turn,omitempty"`
	Span          *schema.Span        `json:"span,omitempty"`
	Note          *store.Note         `json:"note,omitempty"`
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

// Add adds o's counts to c's.
func (c *Counts) Add(o Counts) {
	c.Threads += o.Threads
	c.Turns += o.Turns
	c.Spans += o.Spans
	c.Notes += o.Notes
}
