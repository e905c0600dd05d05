package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// A trace's page and a thread's export find their rows through the lookups
// of migration 0022, whoever inserted the rows (here SQL, not the writer):
// a trace's turns in two threads and projects, the spans of the traces of
// a thread's turns and the span that names it in a trace of none. The
// migration's backfill gives the same answers; a deletion and a prune
// remove the lookups' rows with theirs.
func TestReadsByKeyFindEveryRow(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, time.Minute)
	march := uint64(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC).UnixNano())
	may := uint64(time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC).UnixNano())
	turn := func(thread, project, trace, span string, at uint64) schema.Turn {
		tt := turnAt(thread, span+":response:1", at, 0.5)
		tt.TraceID, tt.SpanID, tt.Project = trace, span, project
		return tt
	}
	testkit.InsertTurns(t, conn,
		turn("th1", "p", "tr", "a", march), turn("th2", "q", "tr", "b", may), turn("th1", "p", "tr2", "c", may))
	testkit.InsertTurns(t, conn, turn("th1", "p", "tr", "a", march)) // a copy
	testkit.InsertSpans(t, conn,
		schema.Span{TraceID: "tr", SpanID: "a", Project: "p", ThreadID: "th1", Name: "chat", StartNS: march},
		schema.Span{TraceID: "tr", SpanID: "root", Project: "p", Name: "pipeline", StartNS: march - 1},
		schema.Span{TraceID: "tr3", SpanID: "step", Project: "p", ThreadID: "th1", Name: "step", StartNS: may},
		schema.Span{TraceID: "tr3", SpanID: "other", Project: "p", ThreadID: "th9", Name: "other", StartNS: may})

	reads := func() string {
		t.Helper()
		var out []string
		for _, trace := range []string{"tr", "tr2", "tr3", "nope"} {
			_, calls, err := s.TraceRows(ctx, trace)
			if err != nil {
				t.Fatal(err)
			}
			found, err := s.TraceExists(ctx, trace)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range calls {
				ids = append(ids, c.SpanID+"@"+c.ThreadID)
			}
			slices.Sort(ids)
			out = append(out, fmt.Sprintf("%s%v:%s", trace, found, strings.Join(ids, ",")))
		}
		turns, err := s.SpanTurns(ctx, "tr", "b")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("b:%d", len(turns)))
		group, err := s.ExportGroupSpans(ctx, []string{"th1", "th2"})
		if err != nil {
			t.Fatal(err)
		}
		stray, err := s.StraySpans(ctx, []string{"th1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []map[string][]schema.Span{group, stray} {
			for _, thread := range []string{"th1", "th2"} {
				var ids []string
				for _, sp := range set[thread] {
					ids = append(ids, sp.TraceID+"/"+sp.SpanID)
				}
				slices.Sort(ids)
				out = append(out, thread+"="+strings.Join(ids, ","))
			}
		}
		return strings.Join(out, " ")
	}
	const want = "trtrue:a@th1,b@th2 tr2true:c@th1 tr3true: nopefalse: b:1 " +
		"th1=tr/a,tr/root,tr3/step th2=tr/a,tr/root th1=tr3/step th2="
	if got := reads(); got != want {
		t.Errorf("through the views:\n got %s\nwant %s", got, want)
	}

	// The rows stored before the migration, filled in by it.
	for _, table := range []string{"trace_threads", "thread_traces"} {
		if err := conn.Exec(ctx, "TRUNCATE TABLE "+table); err != nil {
			t.Fatal(err)
		}
	}
	caps, err := ddl.ServerCapabilities(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ddl.Migrations() {
		if m.Name != "trace_lookups" {
			continue
		}
		stmts, err := m.Statements(caps)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stmts {
			if strings.HasPrefix(st, "INSERT") {
				if err := conn.Exec(ctx, st); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if got := reads(); got != want {
		t.Errorf("through the backfill:\n got %s\nwant %s", got, want)
	}

	if _, err := s.DeleteThread(ctx, "th2", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, PruneScope{BeforeNS: march + 1}, nil); err != nil {
		t.Fatal(err)
	}
	const left = "trfalse: tr2true:c@th1 tr3true: nopefalse: b:0 th1=tr3/step th2= th1=tr3/step th2="
	if got := reads(); got != left {
		t.Errorf("after deleting th2 and pruning March:\n got %s\nwant %s", got, left)
	}
	var lookups []string
	for _, q := range []string{"SELECT concat(trace_id, '@', thread_id) FROM trace_threads ORDER BY 1",
		"SELECT concat(trace_id, '@', thread_id) FROM thread_traces ORDER BY 1"} {
		lookups = append(lookups, strings.Join(testkit.Strings(t, conn, q), ","))
	}
	if got := strings.Join(lookups, " "); got != "tr2@th1 tr3@th1,tr3@th9" {
		t.Errorf("lookups after deleting th2 and pruning March: %s, want tr2@th1 tr3@th1,tr3@th9", got)
	}
}
