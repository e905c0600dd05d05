package collector_test

import (
	"context"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// heartbeats returns the heartbeat_ns of every stored copy of the thread's
// prompt, oldest first, read without FINAL.
func heartbeats(t *testing.T, conn driver.Conn, thread string) []uint64 {
	t.Helper()
	var beats []uint64
	if err := conn.QueryRow(context.Background(),
		"SELECT arraySort(groupArray(heartbeat_ns)) FROM conversations WHERE thread_id = ? AND role = 'prompt'", thread).Scan(&beats); err != nil {
		t.Fatal(err)
	}
	return beats
}

// While a call runs, PendingProcessor stores its prompt again every
// heartbeat, stamped with the time; it stops when the call ends, and every
// copy folds with the call's final rows into one row per turn.
func TestPendingProcessorHeartbeat(t *testing.T) {
	conn, dsn := testkit.Open(t)
	const after, every = 100 * time.Millisecond, 300 * time.Millisecond
	tp, err := collector.NewTracerProvider(dsn, collector.WithPendingAfter(after), collector.WithHeartbeat(every))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))

	start := uint64(time.Now().UnixNano())
	var beats []uint64
	_, err = rec.Call(context.Background(), instrument.Turn{Thread: "hb", Model: "slow-model", Prompt: "think hard"},
		func(context.Context) (instrument.Response, error) {
			for deadline := time.Now().Add(5 * time.Second); len(beats) < 3 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
				beats = heartbeats(t, conn, "hb")
			}
			return instrument.Response{Content: "done"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("heartbeats while running, ns after the start: %v", func() (rel []uint64) {
		for _, b := range beats {
			rel = append(rel, b-start)
		}
		return rel
	}())
	if len(beats) < 3 {
		t.Fatalf("%d prompt rows stored within 5 s, want the pending prompt and 2 heartbeats", len(beats))
	}
	if beats[0] < start+uint64(after) {
		t.Errorf("first prompt stamped %v after the start, want at least the pending delay %v", time.Duration(beats[0]-start), after)
	}
	for i := 1; i < len(beats); i++ {
		if gap := time.Duration(beats[i] - beats[i-1]); gap < every {
			t.Errorf("heartbeats %d and %d %v apart, want at least %v", i-1, i, gap, every)
		}
	}

	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended := heartbeats(t, conn, "hb")
	time.Sleep(2 * every)
	if later := heartbeats(t, conn, "hb"); len(later) != len(ended) {
		t.Errorf("%d prompt rows after the call ended, %d two heartbeats later: want no heartbeat after the end", len(ended), len(later))
	}

	var rows, folded, turns, keysPerTurn uint64
	var lastBeat uint64
	if err := conn.QueryRow(context.Background(), `
SELECT count(), (SELECT count() FROM conversations FINAL WHERE thread_id = 'hb'), uniqExact(turn_id),
       (SELECT max(keys) FROM (SELECT uniqExact(project, thread_id, start_ns) AS keys FROM conversations WHERE thread_id = 'hb' GROUP BY turn_id)),
       (SELECT heartbeat_ns FROM conversations FINAL WHERE thread_id = 'hb' AND role = 'prompt')
FROM conversations
WHERE thread_id = 'hb'`).Scan(&rows, &folded, &turns, &keysPerTurn, &lastBeat); err != nil {
		t.Fatal(err)
	}
	if turns != 2 || folded != turns || keysPerTurn != 1 || rows != uint64(len(ended))+1 {
		t.Errorf("%d rows, %d under FINAL, %d turn ids, at most %d sort keys per turn; want %d prompt copies and a response, 2 rows under FINAL, 1 key per turn",
			rows, folded, turns, keysPerTurn, len(ended))
	}
	if lastBeat != ended[len(ended)-1] {
		t.Errorf("FINAL keeps the prompt stamped %d, want the last heartbeat %d", lastBeat, ended[len(ended)-1])
	}
}

// A call that learns its session and model while it runs, after its
// prompt was stored early, has them on its prompt once it ends.
func TestPendingPromptLearnsWhileRunning(t *testing.T) {
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithPendingAfter(10*time.Millisecond), collector.WithHeartbeat(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	_, call := rec.Start(context.Background(), instrument.Turn{Thread: "learns", Prompt: "go"})
	for deadline := time.Now().Add(5 * time.Second); len(heartbeats(t, conn, "learns")) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if len(heartbeats(t, conn, "learns")) == 0 {
		t.Fatal("the prompt was not stored early")
	}
	call.Span().SetAttributes(attribute.String(schema.KeySessionID, "sess-1"))
	call.End(instrument.Response{Content: "done", Model: "m-1"}, nil)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var session, model string
	if err := conn.QueryRow(context.Background(), "SELECT session_id, model FROM conversations FINAL WHERE thread_id = 'learns' AND role = 'prompt'").Scan(&session, &model); err != nil {
		t.Fatal(err)
	}
	if session != "sess-1" || model != "m-1" {
		t.Errorf("prompt with session %q model %q, want what the call learnt: sess-1, m-1", session, model)
	}
}
