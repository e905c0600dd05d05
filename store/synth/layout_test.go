package synth

import (
	"context"
	"strconv"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestThreadLayout checks, without writing a row, how the calls of large
// configs spread over threads: every thread gets calls, the known threads
// their exact lengths, and lengths vary. It runs the generator's own call
// columns over every call number, which takes a second for 10M turns.
func TestThreadLayout(t *testing.T) {
	conn, _ := testkit.Open(t)
	tests := []Config{
		{Turns: 10_000_000},
		{Turns: 1_000_000},
		{Turns: 1_000_001, Threads: 777},
		{Turns: 1410, Threads: 100}, // the smallest valid: one call per other thread
	}
	for _, cfg := range tests {
		cfg = cfg.withDefaults()
		g := newGen(cfg)
		calls := (cfg.Turns + 1) / 2
		query := g.values.Replace(`
SELECT count(), countIf(thread = {thread10}), countIf(thread = {thread200}), countIf(thread = {thread1000}),
       min(c), max(c), countIf(bad_pos)
FROM
(
    SELECT thread, count() AS c, max(pos) + 1 != count() AS bad_pos
    FROM (SELECT number AS call,` + callColumns + ` FROM system.numbers LIMIT ` + strconv.Itoa(calls) + `)
    GROUP BY thread
)`)
		var threads, t10, t200, t1000, minCalls, maxCalls, badPos uint64
		if err := conn.QueryRow(context.Background(), query).Scan(&threads, &t10, &t200, &t1000, &minCalls, &maxCalls, &badPos); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		t.Logf("%d turns: %d threads of %d to %d calls", cfg.Turns, threads, minCalls, maxCalls)
		if threads != uint64(cfg.Threads) || t10+t200+t1000 != 3 || minCalls < 1 || badPos != 0 {
			t.Errorf("%d turns over %d threads: got %d threads (known ones found: %d %d %d), %d to %d calls a thread, %d threads whose call positions are not 0..n-1; want %d threads, each known once, at least 1 call each, positions 0..n-1",
				cfg.Turns, cfg.Threads, threads, t10, t200, t1000, minCalls, maxCalls, badPos, cfg.Threads)
		}
		if cfg.Turns >= 1_000_000 && maxCalls < 10*minCalls {
			t.Errorf("%d turns: thread lengths %d to %d calls, want the longest at least 10 × the shortest", cfg.Turns, minCalls, maxCalls)
		}
	}
}
