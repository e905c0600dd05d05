package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// A call's answer can come in a later month than its prompt: the status of
// a prompt is read from the spans of its month on, whichever month the
// search reads it from, and a call running since January is running.
func TestSearchStatusAcrossMonths(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, 5*time.Minute)
	at := func(m time.Month, day int) uint64 {
		return uint64(time.Date(2026, m, day, 23, 59, 0, 0, time.UTC).UnixNano())
	}
	turn := func(id, span, role string, start, duration, heartbeat uint64) schema.Turn {
		tt := turnAt("th", id, start, 0)
		tt.SpanID, tt.Role, tt.DurationNS, tt.HeartbeatNS = span, role, duration, heartbeat
		return tt
	}
	now := uint64(time.Now().UnixNano())
	testkit.InsertTurns(t, conn,
		// Answered across the month's end.
		turn("late:prompt", "late", schema.RolePrompt, at(1, 31), 0, 0),
		turn("late:response", "late", schema.RoleResponse, at(2, 1), 1e9, 0),
		// Answered in its month.
		turn("early:prompt", "early", schema.RolePrompt, at(1, 2), 0, 0),
		turn("early:response", "early", schema.RoleResponse, at(1, 3), 1e9, 0),
		// Never answered: its recorder beats still, or stopped.
		turn("beating:prompt", "beating", schema.RolePrompt, at(1, 5), 0, now),
		turn("dead:prompt", "dead", schema.RolePrompt, at(1, 6), 0, 0),
		// The newest month, February, holds one prompt.
		turn("feb:prompt", "feb", schema.RolePrompt, at(2, 20), 0, 0),
	)
	for _, tt := range []struct{ status, want string }{
		{schema.StatusOK, "late:prompt early:prompt"},
		{StatusRunning, "beating:prompt"},
		{StatusInterrupted, "feb:prompt dead:prompt"},
	} {
		for _, limit := range []int{1, 10} { // the newest month alone, then the others
			hits, err := s.Search(ctx, SearchFilter{Status: tt.status, TurnFilter: TurnFilter{Role: schema.RolePrompt}}, limit)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range hits {
				ids = append(ids, h.TurnID)
			}
			want := strings.Fields(tt.want)
			if got := strings.Join(ids, " "); got != strings.Join(want[:min(limit, len(want))], " ") {
				t.Errorf("status %s, page of %d: %s, want the first %d of %s", tt.status, limit, got, limit, tt.want)
			}
		}
	}
}

// The facets of a project are read once a minute, whoever asks, each
// project's apart; a store made without New reads them every time.
func TestSearchFacetsKeptAMinute(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	db := &recordingDB{DB: conn}
	turn := turnAt("th", "t1", 1e9, 0)
	turn.ToolName = "grep"
	testkit.InsertTurns(t, conn, turn)
	reads := func(s Store, projects ...string) (n int, tools string) {
		t.Helper()
		for _, p := range projects {
			f, err := s.SearchFacets(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			tools += strings.Join(f.Tools, ",") + ";"
		}
		for _, q := range db.take() {
			if strings.Contains(q, "'tools' AS facet") {
				n++
			}
		}
		return n, tools
	}
	if n, tools := reads(New(db, 100, time.Minute), "p", "p", "", "p", "nope"); n != 3 || tools != "grep;grep;grep;grep;;" {
		t.Errorf("facets of p, p, all, p, nope: %d reads, tools %q; want 3 reads (p, all, nope), grep but for nope", n, tools)
	}
	if n, _ := reads(Store{db: db}, "p", "p"); n != 2 {
		t.Errorf("a store without New: %d reads of two asks, want 2", n)
	}
}
