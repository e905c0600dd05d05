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
)

// chunkIDs keeps every id once, sorted (so that a chunk is a range of the
// sort key), and each chunk within both limits, however the ids' lengths
// fall.
func TestChunkIDs(t *testing.T) {
	ids := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", size, i)
		}
		return out
	}
	big := strings.Repeat("x", summaryChunkBytes+1) // over the byte limit alone
	tests := []struct {
		name string
		ids  []string
		want []int // chunk lengths
	}{
		{"none", nil, nil},
		{"one", ids(1, 5), []int{1}},
		{"count limit", ids(2*summaryChunk+1, 5), []int{summaryChunk, summaryChunk, 1}},
		{"byte limit", ids(300, 200), []int{204, 96}}, // 204·200 ≤ 40 KiB < 205·200
		{"an id over the byte limit stands alone", append(ids(2, 5), big, "a"), []int{3, 1}},
		{"sorted", []string{"b", "c", "a"}, []int{3}},
	}
	for _, tt := range tests {
		want := slices.Sorted(slices.Values(tt.ids))
		chunks := chunkIDs(tt.ids)
		var got []int
		var joined []string
		for _, c := range chunks {
			got = append(got, len(c))
			joined = append(joined, c...)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || !slices.Equal(joined, want) {
			t.Errorf("%s: chunk lengths %v, want %v (ids kept once, sorted: %v)", tt.name, got, tt.want,
				slices.Equal(joined, want))
		}
	}
}

// A summary computed before migration 0020 (layout 0: no status, duration
// or attributes) is recomputed by the first refresh after the upgrade,
// which, knowing nothing under the new state's name, reads every
// fingerprint: the old summary's fingerprint matches the rows, its layout
// does not.
func TestSummaryOfAnOlderLayoutIsRecomputed(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	turn := func(id, role, status string, start uint64, attrs ...schema.Attr) schema.Turn {
		return schema.Turn{TurnID: id + ":" + role, SpanID: id, ThreadID: "th", Role: role, Status: status,
			Content: role, StartNS: start, Attributes: attrs}
	}
	testkit.InsertTurns(t, conn,
		turn("a", schema.RolePrompt, schema.StatusOK, 1_000),
		turn("a", schema.RoleError, schema.StatusError, 3_000, schema.Attr{Key: "convtrace.thread.task", Value: "T-1"}))
	store := New(conn, 100, time.Minute)
	if _, err := store.Threads(ctx, ThreadFilter{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	// The summary as 0019 computed it, newer than the one just computed.
	err := conn.Exec(ctx, `
INSERT INTO thread_summary (computed_ns, layout, rows_seen, rows_hash, project, thread_id, turns, last_ns)
SELECT computed_ns + 1, 0, rows_seen, rows_hash, project, thread_id, turns, last_ns FROM thread_summary`)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.refreshAllSummaries(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := store.Threads(ctx, ThreadFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(page.Threads))
	}
	th := page.Threads[0]
	if th.FailedCalls != 1 || th.FirstNS != 1_000 || th.DurationNS != 2_000 || th.Attributes["task"] != "T-1" {
		t.Errorf("thread after the upgrade's refresh: failed %d, first %d, duration %d, attributes %v; want 1, 1000, 2000, task T-1",
			th.FailedCalls, th.FirstNS, th.DurationNS, th.Attributes)
	}
}
