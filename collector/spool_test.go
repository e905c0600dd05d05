package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
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
	got := s.next(1000)
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("replayed\n%+v\nwant\n%+v", got, want)
	}
	if s.next(1000) != nil {
		t.Error("a second batch replayed from one append")
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
	if r := reader.next(1000); r != nil {
		t.Fatalf("replayed %q from a segment still appended to", r.Turns[0].TurnID)
	}
	writer.close()
	reader.maybe.Store(true)
	if r := reader.next(1000); r == nil || r.Turns[0].TurnID != "held" {
		t.Fatalf("closed segment not replayed: %+v", r)
	}
	if r := reader.next(1000); r != nil {
		t.Fatalf("replayed twice")
	}
}

// segments returns the segment files in dir.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestSpoolJournal: a journaled segment is removed once every item in it
// is stored; a full one takes no more records and waits for its items;
// one whose items the writer drops, or the queue refuses, is replayed.
func TestSpoolJournal(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(dir, discardLogger())
	defer s.close()
	s.maybe.Store(false) // nothing from before
	journal := func(id string, size int) *segment {
		t.Helper()
		var seg *segment
		spooled, err := s.journal(rows{Turns: []schema.Turn{{TurnID: id, Content: strings.Repeat("x", size)}}},
			func(sg *segment) error { seg = sg; return nil })
		if err != nil || spooled || seg == nil {
			t.Fatalf("journal %s: spooled %v, err %v, segment %v", id, spooled, err, seg)
		}
		return seg
	}
	replayed := func() []string {
		var ids []string
		for r := s.next(100); r != nil; r = s.next(100) {
			for _, tu := range r.Turns {
				ids = append(ids, tu.TurnID)
			}
		}
		return ids
	}

	a, b := journal("a", 0), journal("b", 0)
	s.stored([]*segment{a})
	afterA := len(segments(t, dir))
	s.stored([]*segment{b})
	if a != b || afterA != 1 || len(segments(t, dir)) != 0 || s.pending() {
		t.Errorf("two items in one segment: %d files after the first was stored, %d after both; want 1 then 0, nothing to replay", afterA, len(segments(t, dir)))
	}

	full, next := journal("full", segmentBytes), journal("next", 0)
	both := len(segments(t, dir))
	s.stored([]*segment{full})
	if full == next || both != 2 || len(segments(t, dir)) != 1 {
		t.Errorf("a full segment: %d files, %d once its item was stored; want 2 then 1", both, len(segments(t, dir)))
	}

	s.drop([]*segment{next})
	if got := replayed(); !slices.Equal(got, []string{"next"}) || len(segments(t, dir)) != 0 {
		t.Errorf("dropped: replayed %q, %d files left; want next, none", got, len(segments(t, dir)))
	}

	spooled, err := s.journal(rows{Turns: []schema.Turn{{TurnID: "refused"}}}, func(*segment) error { return errQueueFull })
	if got := replayed(); err != nil || !spooled || !slices.Equal(got, []string{"refused"}) {
		t.Errorf("refused by the queue: spooled %v, err %v, replayed %q; want spooled and replayed", spooled, err, got)
	}
}

// TestSpoolRemovesASegmentAfterItsLastRecords: a segment is removed only by
// the replay call after the one that returned its last records (the writer
// calls again only once it stored them), and damaged bytes are in the
// damaged folder before that.
func TestSpoolRemovesASegmentAfterItsLastRecords(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(dir, discardLogger())
	var turns []schema.Turn
	for i := range 1000 {
		turns = append(turns, schema.Turn{TurnID: fmt.Sprint(i)})
	}
	if err := s.append(rows{Turns: turns}); err != nil {
		t.Fatal(err)
	}
	s.close()
	name := segments(t, dir)[0]
	b, _ := os.ReadFile(name)
	if err := os.WriteFile(name, flip(b, len(b)/2), 0o600); err != nil {
		t.Fatal(err)
	}
	s = newSpool(dir, discardLogger())
	var got int
	for {
		r := s.next(300)
		_, err := os.Stat(name)
		aside, _ := os.ReadDir(filepath.Join(dir, damagedDir))
		if r == nil {
			if err == nil || len(aside) != 1 {
				t.Errorf("replay done: segment there %v, %d damaged files; want it removed, one kept", err == nil, len(aside))
			}
			break
		}
		if err != nil {
			t.Fatalf("segment removed while its records %d.. were not stored yet", got)
		}
		got += r.len()
	}
	t.Logf("replayed %d of 1000 rows", got)
	if got != 1000-recordRows {
		t.Errorf("want all but one record's %d rows", recordRows)
	}
}

// flip returns b with the 16 bytes at off inverted.
func flip(b []byte, off int) []byte {
	b = slices.Clone(b)
	for i := off; i < off+16; i++ {
		b[i] ^= 0xff
	}
	return b
}

// spooledRecord is a record of a segment: its extent and its rows' ids.
type spooledRecord struct {
	start, end int64
	ids        []string
}

// recordsIn lists the records of an undamaged segment.
func recordsIn(t *testing.T, name string) []spooledRecord {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	r := &recordReader{f: f, size: fi.Size(), legacy: strings.HasSuffix(name, legacyExt)}
	var recs []spooledRecord
	for {
		start := r.off
		rs, err := r.next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("%s at %d: %v", name, start, err)
		}
		recs = append(recs, spooledRecord{start: start, end: r.off, ids: idsOf(*rs)})
	}
}

func idsOf(r rows) []string {
	var ids []string
	for _, tu := range r.Turns {
		ids = append(ids, "turn "+tu.TurnID)
	}
	for _, s := range r.Spans {
		ids = append(ids, "span "+s.SpanID)
	}
	return ids
}

// flushSegment records calls through a pipeline whose ClickHouse is down,
// and returns the one segment its Shutdown writes.
func flushSegment(t *testing.T, calls int) string {
	t.Helper()
	dir := t.TempDir()
	tp, err := NewTracerProvider("clickhouse://127.0.0.1:1/down", WithSpool(dir), WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx := instrument.WithThread(context.Background(), "flushed")
	for i := range calls {
		_, err := rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: fmt.Sprintf("call %d %s", i, strings.Repeat("p", 300))},
			func(context.Context) (instrument.Response, error) {
				return instrument.Response{Content: "answer", Usage: &instrument.Usage{InputTokens: 10, OutputTokens: 2}}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	segs := segments(t, dir)
	if st := tp.Stats(); st.Spooled != int64(3*calls) || len(segs) != 1 {
		t.Fatalf("stats %+v, segments %q; want every row spooled in one segment", st, segs)
	}
	return segs[0]
}

// TestSpoolDamageCostsOnlyItsRecords replays damaged segments into a real
// ClickHouse: Shutdown's flush of 2,500 calls (7,500 rows) in bounded
// records, truncated, with 16 bytes flipped in the middle, with its first
// record's header flipped; and a segment the first format wrote, whole and
// damaged. Every row of an undamaged record is stored, once; the damaged
// bytes are in the damaged folder; the segment stays while storage is down
// and is removed once replayed.
func TestSpoolDamageCostsOnlyItsRecords(t *testing.T) {
	flushed := flushSegment(t, 2500)
	// Written by the spool of commit 04792ad: 12 calls, a record each.
	firstFormat := filepath.Join("testdata", "spool", "first-format"+legacyExt)
	for _, r := range recordsIn(t, flushed) {
		if len(r.ids) > recordRows || r.end-r.start > headerLen+recordBytes {
			t.Fatalf("flush record at %d: %d rows, %d bytes; want at most %d and %d", r.start, len(r.ids), r.end-r.start, recordRows, recordBytes)
		}
	}
	whole := func(b []byte) ([]byte, int) { return b, len(b) }
	cases := []struct {
		name   string
		source string
		// damage returns the damaged segment and where damage starts.
		damage func([]byte) ([]byte, int)
	}{
		{"flush truncated", flushed, func(b []byte) ([]byte, int) { return b[:len(b)*2/3], len(b) * 2 / 3 }},
		{"flush with 16 bytes flipped in the middle", flushed, func(b []byte) ([]byte, int) { return flip(b, len(b)/2), len(b) / 2 }},
		{"flush with its first header flipped", flushed, func(b []byte) ([]byte, int) { return flip(b, 0), 0 }},
		{"first format", firstFormat, whole},
		{"first format with 16 bytes flipped in the middle", firstFormat, func(b []byte) ([]byte, int) { return flip(b, len(b)/2), len(b) / 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, dsn := testkit.Open(t)
			orig, err := os.ReadFile(tc.source)
			if err != nil {
				t.Fatal(err)
			}
			damaged, at := tc.damage(orig)
			dir := t.TempDir()
			name := filepath.Join(dir, "00000000000000000001-1"+filepath.Ext(tc.source))
			if err := os.WriteFile(name, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			// What replay must store, and set aside: the records the damage
			// touches (a flip is 16 bytes, a truncation cuts one record),
			// and in a first-format segment every record after them.
			var want []string
			var aside int64
			size, from := int64(len(damaged)), int64(at)
			for _, r := range recordsIn(t, tc.source) {
				switch {
				case r.start >= size: // cut off
				case r.end > from && r.start < from+16 || filepath.Ext(tc.source) == legacyExt && aside > 0:
					aside += min(r.end, size) - r.start
				default:
					want = append(want, r.ids...)
				}
			}
			slices.Sort(want)

			down, err := NewExporter("clickhouse://127.0.0.1:1/down", WithSpool(dir), WithLogger(discardLogger()))
			if err != nil {
				t.Fatal(err)
			}
			_ = down.Shutdown(context.Background())
			if _, err := os.Stat(name); err != nil || down.Stats().Lost != 0 {
				t.Fatalf("replay with storage down: segment there %v, stats %+v; want it kept, nothing lost", err == nil, down.Stats())
			}

			var logs testkit.Buffer
			up, err := NewExporter(dsn, WithSpool(dir), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for _, err := os.Stat(name); err == nil && time.Now().Before(deadline); _, err = os.Stat(name) {
				time.Sleep(20 * time.Millisecond)
			}
			if err := up.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := up.Stats()
			got := testkit.Strings(t, conn, "SELECT concat('turn ', turn_id) FROM conversations UNION ALL SELECT concat('span ', span_id) FROM spans")
			slices.Sort(got)
			missing, extra := difference(want, got), difference(got, want)
			t.Logf("damage at %d of %d bytes: want %d rows stored, %d bytes set aside; stored %d (%d missing, %d extra), stats %+v",
				at, len(orig), len(want), aside, len(got), len(missing), len(extra), st)
			if len(missing)+len(extra) != 0 || st.SetAsideBytes != aside {
				t.Errorf("want every row of an undamaged record stored once, the damaged ones' %d bytes set aside; missing %.5q, extra %.5q", aside, missing, extra)
			}
			if _, err := os.Stat(name); err == nil {
				t.Errorf("segment not removed once replayed")
			}
			if aside > 0 && !strings.Contains(logs.String(), "set_aside_total="+fmt.Sprint(aside)) {
				t.Errorf("set aside bytes not logged:\n%s", logs.String())
			}
			checkSetAside(t, dir, damaged, "damaged", aside)
		})
	}
}

// difference returns what of the sorted a is not in the sorted b.
func difference(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}

// checkSetAside asserts the damaged folder of dir holds, in files named
// for their segment, offset and kind, n bytes that are the segment's own.
func checkSetAside(t *testing.T, dir string, segment []byte, kind string, n int64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, damagedDir, "*."+kind))
	var total int64
	for _, f := range files {
		var off int64
		if _, err := fmt.Sscanf(filepath.Ext(strings.TrimSuffix(f, "."+kind)), ".%d", &off); err != nil {
			t.Fatalf("set aside as %s: no offset in its name", f)
		}
		b, _ := os.ReadFile(f)
		if !bytes.Equal(b, segment[off:off+int64(len(b))]) {
			t.Errorf("%s does not hold the segment's bytes at %d", f, off)
		}
		total += int64(len(b))
	}
	t.Logf("set aside: %q, %d bytes", files, total)
	if total != n {
		t.Errorf("%d bytes set aside as %s, want %d", total, kind, n)
	}
}

// TestSpoolSetsAsideRefusedRecords: records storage refuses for good (their
// table renamed away) are moved to the damaged folder before their segment
// is removed, not deleted with it; the rest of their batch is stored.
func TestSpoolSetsAsideRefusedRecords(t *testing.T) {
	conn, dsn := testkit.Open(t)
	if err := conn.Exec(context.Background(), "RENAME TABLE conversations TO conversations_away"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := newSpool(dir, discardLogger())
	if err := s.append(rows{Turns: []schema.Turn{{TurnID: "refused"}}, Spans: []schema.Span{{TraceID: "t", SpanID: "stored"}}}); err != nil {
		t.Fatal(err)
	}
	s.close()
	name := segments(t, dir)[0]
	segment, _ := os.ReadFile(name)
	w, err := NewExporter(dsn, WithSpool(dir), WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, err := os.Stat(name); err == nil && time.Now().Before(deadline); _, err = os.Stat(name) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = w.Shutdown(context.Background())
	st := w.Stats()
	spans := testkit.Strings(t, conn, "SELECT span_id FROM spans")
	t.Logf("stats %+v; spans stored %q", st, spans)
	if st.Lost != 1 || st.SetAsideBytes != int64(len(segment)) || !slices.Equal(spans, []string{"stored"}) {
		t.Errorf("want the refused turn counted lost and its records set aside, the span stored")
	}
	if _, err := os.Stat(name); err == nil {
		t.Errorf("segment not removed")
	}
	checkSetAside(t, dir, segment, "refused", int64(len(segment)))
}
