package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// Search reads the newest month partition first and stops when it holds
// the page, else reads the rest in one more query; pages back and forth
// across months hold the same turns in order; a turn delivered five times
// is one hit.
func TestSearchReadsNewestMonthsFirst(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	db := &recordingDB{DB: conn}
	s := New(db, 100, time.Minute)
	month := func(m time.Month, day int) uint64 {
		return uint64(time.Date(2026, m, day, 12, 0, 0, 0, time.UTC).UnixNano())
	}
	turns := []struct {
		id string
		at uint64
	}{
		{"jan1", month(1, 10)}, {"jan2", month(1, 20)},
		{"mar1", month(3, 5)}, {"mar2", month(3, 6)}, {"mar3", month(3, 7)},
		{"may1", month(5, 1)}, {"may2", month(5, 2)},
	}
	for _, tt := range turns {
		turn := turnAt("th", tt.id, tt.at, 1)
		turn.Content = "needle in " + tt.id
		testkit.InsertTurns(t, conn, turn)
	}
	// jan2 delivered five times, merges stopped so that none folds the
	// copies before the searches read them.
	if err := conn.Exec(ctx, "SYSTEM STOP MERGES conversations"); err != nil {
		t.Fatal(err)
	}
	again := turnAt("th", "jan2", month(1, 20), 1)
	again.Content = "needle in jan2"
	for range 4 {
		testkit.InsertTurns(t, conn, again)
	}

	search := func(f SearchFilter, limit int) (ids string, keyQueries int) {
		t.Helper()
		f.Q = "needle"
		hits, err := s.Search(ctx, f, limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.TurnID)
		}
		for _, q := range db.take() {
			if strings.Contains(q, "toYYYYMM(ts)") {
				keyQueries++
			}
		}
		return strings.Join(got, ","), keyQueries
	}
	if ids, n := search(SearchFilter{}, 2); ids != "may2,may1" || n != 1 {
		t.Errorf("newest page of 2: %s from %d months, want may2,may1 from May alone", ids, n)
	}
	if ids, n := search(SearchFilter{}, 3); ids != "may2,may1,mar3" || n != 2 {
		t.Errorf("newest page of 3: %s from %d queries, want may2,may1,mar3 from May, then the months before", ids, n)
	}
	older := &SearchCursor{StartNS: month(3, 7), TurnID: "mar3"}
	if ids, _ := search(SearchFilter{After: older}, 3); ids != "mar2,mar1,jan2" {
		t.Errorf("page after mar3: %s, want mar2,mar1,jan2", ids)
	}
	newer := &SearchCursor{StartNS: month(3, 6), TurnID: "mar2"}
	if ids, _ := search(SearchFilter{Before: newer}, 2); ids != "may1,mar3" {
		t.Errorf("page before mar2: %s, want may1,mar3 (the two nearest, newest first)", ids)
	}
	if ids, n := search(SearchFilter{TurnFilter: TurnFilter{ToNS: month(2, 1)}}, 10); ids != "jan2,jan1" || n != 1 {
		t.Errorf("up to February: %s from %d months, want jan2 (delivered twice: one hit),jan1 from January alone", ids, n)
	}
	// A page of 2 asks for 4 rows, all jan2's copies: it asks January
	// again for 8.
	if ids, n := search(SearchFilter{TurnFilter: TurnFilter{ToNS: month(2, 1)}}, 2); ids != "jan2,jan1" || n != 2 {
		t.Errorf("page of 2 up to February: %s from %d queries, want jan2,jan1 from 2 queries of January", ids, n)
	}
}

// The titles of search hits come from the summaries, brought up to date
// when a hit's thread has none yet: the first search of a new database,
// and a thread that began since the summaries were last refreshed.
func TestThreadTitlesOfNewThreads(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	s := New(conn, 100, time.Minute)
	now := uint64(time.Now().UnixNano())
	prompt := func(thread, text string, at uint64) {
		turn := turnAt(thread, thread+"-p", at, 0)
		turn.Role, turn.Content, turn.CostSource = schema.RolePrompt, text, ""
		testkit.InsertTurns(t, conn, turn)
	}
	titles := func() string {
		t.Helper()
		hits, err := s.Search(ctx, SearchFilter{Q: "needle"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ThreadTitles(ctx, hits)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	prompt("old", "needle in the old thread", now-2e9)
	if got := titles(); got != "map[old:needle in the old thread]" {
		t.Errorf("titles with no summary yet: %s", got)
	}
	prompt("new", "needle in the new thread", now-1e9)
	if got := titles(); got != "map[new:needle in the new thread old:needle in the old thread]" {
		t.Errorf("titles after a new thread began: %s", got)
	}
}
