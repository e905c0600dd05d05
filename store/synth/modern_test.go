package synth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
)

// The other tests generate on ClickHouse 18.16; this runs the same INSERT …
// SELECT statements on a modern server (chDB 26.x), where benchmarks against
// docker-compose's ClickHouse would run them, and checks what they wrote.
func TestGenerateOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, stmts := chdbcheck.Schema(ctx, t)
	cfg := Config{Turns: 2001, Threads: 50, ChunkTurns: 1000}.withDefaults()
	g := newGen(cfg)
	for from := 0; from < cfg.Turns; from += cfg.ChunkTurns {
		stmts = append(stmts, g.turnsQuery(from, min(cfg.ChunkTurns, cfg.Turns-from)))
	}
	stmts = append(stmts, g.spansQuery(0, (cfg.Turns+1)/2))
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{
		Statements: stmts,
		Queries: []string{g.values.Replace(`
SELECT count() AS turns, uniqExact(turn_id) AS ids, uniqExact(thread_id) AS threads,
       countIf(thread_id = {thread1000}) AS known, countIf(positionCaseInsensitiveUTF8(content, {rare}) > 0) AS rare,
       (SELECT count() FROM spans) AS spans
FROM conversations`)},
	})
	chdbcheck.SkipOrFail(t, err)
	got := out.Results[0].Rows[0]
	want := map[string]string{"turns": "2001", "ids": "2001", "threads": "50", "known": "1000", "rare": "20", "spans": "1001"}
	for col, w := range want {
		if g := fmt.Sprint(got[col]); g != w {
			t.Errorf("chDB %s, %s: got %s, want %s (row %v)", out.Version, col, g, w, got)
		}
	}
}
