package collector

import (
	"bytes"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fullRows sets every field of a turn and a span, with the values other
// encodings change: a pointer to zero, -Inf, invalid UTF-8, empty and nil
// slices.
func fullRows() rows {
	zero, n, c := uint32(0), uint32(7), math.Inf(-1)
	return rows{
		Turns: []schema.Turn{{
			TurnID: "s:prompt:0", TraceID: "t", SpanID: "s", ParentSpanID: "p", ParentTurnID: "q", Project: "pr",
			ThreadID: "th", SessionID: "se", Phase: "plan", Speaker: "sp", Agent: "ag", Round: 65535, Role: "prompt",
			Seq: 3, Operation: "chat", Provider: "openai", Model: "gpt-5", ToolName: "bash", ToolCallID: "c1",
			Content: "h\xffi 한국어", ContentBytes: 9, Truncated: true, TokensIn: &zero, TokensOut: &n, TokensCacheRead: &zero,
			TokensCacheWrite: &n, TokensReasoning: &n, CostUSD: &c, CostSource: schema.CostPriced, Status: "ok",
			Error: "e", StartNS: math.MaxUint64, DurationNS: 1, Attributes: []schema.Attr{{Key: "k", Value: "v"}},
		}, {TurnID: "nil fields", Attributes: []schema.Attr{}}},
		Spans: []schema.Span{{
			TraceID: "t", SpanID: "s", ParentSpanID: "p", Project: "pr", ThreadID: "th", Phase: "plan", Round: 2,
			Speaker: "sp", Agent: "ag", Name: "chat gpt-5", Kind: "client", StartNS: 1, DurationNS: 2, Status: "error",
			StatusMsg: "m", Operation: "chat", Provider: "openai", Model: "gpt-5", TokensIn: &zero, TokensOut: &n,
			CostUSD: &c, Attributes: []schema.Attr{{Key: "a", Value: ""}}, Resource: []schema.Attr{{Key: "service.name", Value: "x"}},
			EventNames: []string{"gen_ai.prompt"}, EventTimesNS: []uint64{5},
		}, {SpanID: "nil fields", EventNames: []string{}}},
	}
}

func TestSpoolRoundTripsEveryField(t *testing.T) {
	s := newSpool(t.TempDir(), discardLogger())
	want := fullRows()
	if err := s.append(want); err != nil {
		t.Fatal(err)
	}
	got := s.next()
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("replayed\n%+v\nwant\n%+v", got, want)
	}
	if s.next() != nil {
		t.Error("a second record replayed from one append")
	}
}

// TestSpoolTornTail cuts the last record short, as a kill mid-write leaves
// it: the records before it replay, the torn one is skipped with a warning.
func TestSpoolTornTail(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(dir, discardLogger())
	for _, id := range []string{"one", "two"} {
		if err := s.append(rows{Turns: []schema.Turn{{TurnID: id}}}); err != nil {
			t.Fatal(err)
		}
	}
	s.close()
	segments, _ := filepath.Glob(filepath.Join(dir, "*"+spoolExt))
	if len(segments) != 1 {
		t.Fatalf("segments %q, want one", segments)
	}
	name := segments[0]
	fi, _ := os.Stat(name)
	if err := os.Truncate(name, fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s = newSpool(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	var got []string
	for r := s.next(); r != nil; r = s.next() {
		got = append(got, r.Turns[0].TurnID)
	}
	t.Logf("replayed %q; logged %s", got, logs.String())
	if len(got) != 1 || got[0] != "one" || !strings.Contains(logs.String(), "torn record") {
		t.Errorf("want record one replayed and the torn one said")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("segment not removed after replay: %q", left)
	}
}

// TestSpoolSegmentsLocked: a segment another spool appends to is not
// replayed until it is closed.
func TestSpoolSegmentsLocked(t *testing.T) {
	dir := t.TempDir()
	writer, reader := newSpool(dir, discardLogger()), newSpool(dir, discardLogger())
	if err := writer.append(rows{Turns: []schema.Turn{{TurnID: "held"}}}); err != nil {
		t.Fatal(err)
	}
	if r := reader.next(); r != nil {
		t.Fatalf("replayed %q from a segment still appended to", r.Turns[0].TurnID)
	}
	writer.close()
	reader.maybe = true
	if r := reader.next(); r == nil || r.Turns[0].TurnID != "held" {
		t.Fatalf("closed segment not replayed: %+v", r)
	}
	if r := reader.next(); r != nil {
		t.Fatalf("replayed twice")
	}
}
