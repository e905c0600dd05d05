package collector_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func chat(content string, err error) func(context.Context) (instrument.Response, error) {
	return func(context.Context) (instrument.Response, error) {
		if err != nil {
			return instrument.Response{}, err
		}
		return instrument.Response{Content: content, Usage: &instrument.Usage{InputTokens: 100, OutputTokens: 20}, CostUSD: ptr(0.5)}, nil
	}
}

func ptr[T any](v T) *T { return &v }

func TestTracerProviderStoresEveryCall(t *testing.T) {
	conn, dsn := testkit.Open(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("itest"), collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx := instrument.WithThread(context.Background(), "th-1")
	plan, err := rec.Call(instrument.WithPhase(ctx, "plan"), instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "plan it"}, chat("the plan", nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rec.Call(instrument.WithPhase(ctx, "review"), instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "review it", ParentTurnID: plan.TurnID}, chat("", errors.New("rate limited")))
	if err == nil || err.Error() != "rate limited" {
		t.Fatalf("Call returned %v, want the call's own error", err)
	}
	if _, err := rec.Tool(instrument.WithPhase(ctx, "execute"), instrument.ToolCall{Name: "bash", CallID: "c1", Arguments: `{"cmd":"ls"}`},
		func(context.Context) (string, error) { return "README.md", nil }); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rows, err := conn.Query(context.Background(), "SELECT phase, role, content, error, parent_turn_id, project FROM conversations ORDER BY start_ns, seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][6]string
	for rows.Next() {
		var r [6]string
		if err := rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := [][6]string{
		{"plan", "prompt", "plan it", "", "", "itest"},
		{"plan", "response", "the plan", "", "", "itest"},
		{"review", "prompt", "review it", "", plan.TurnID, "itest"},
		{"review", "error", "rate limited", "rate limited", plan.TurnID, "itest"},
		{"execute", "tool_call", `{"cmd":"ls"}`, "", "", "itest"},
		{"execute", "tool_result", "README.md", "", "", "itest"},
	}
	if len(got) != len(want) {
		t.Fatalf("conversations rows:\n got %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}

	// The query the README promises analysts.
	var phases int
	r2, err := conn.Query(context.Background(), "SELECT phase, sum(tokens_in), sum(cost_usd) FROM conversations GROUP BY phase")
	if err != nil {
		t.Fatal(err)
	}
	for r2.Next() {
		phases++
	}
	r2.Close()
	var spans uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM spans").Scan(&spans); err != nil {
		t.Fatal(err)
	}
	if phases != 3 || spans != 3 {
		t.Errorf("got %d phases and %d span rows, want 3 and 3", phases, spans)
	}
}

func TestLongCallPromptVisibleWhileRunning(t *testing.T) {
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	count := func(role string) uint64 {
		var n uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations WHERE role = ?", role).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var seenAfter time.Duration
	_, err = rec.Call(context.Background(), instrument.Turn{Model: "slow-model", Prompt: "think hard"}, func(context.Context) (instrument.Response, error) {
		start := time.Now()
		for time.Since(start) < 2*time.Second && seenAfter == 0 {
			if count(schema.RolePrompt) == 1 {
				seenAfter = time.Since(start)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(3*time.Second - time.Since(start))
		return instrument.Response{Content: "done"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seenAfter == 0 {
		t.Fatal("the prompt of a running call was not in ClickHouse within 2 s of its start")
	}
	t.Logf("prompt visible %v after the call started", seenAfter)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Counted without FINAL: the early prompt must not have been stored twice.
	if p, r := count(schema.RolePrompt), count(schema.RoleResponse); p != 1 || r != 1 {
		t.Errorf("after the call: %d prompt rows and %d response rows, want 1 and 1", p, r)
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string { return freeAddrB(t) }

func freeAddrB(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestStorageDownCallsStillSucceed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	exp, err := collector.NewExporter("clickhouse://"+freeAddr(t)+"/convtrace", collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	tp := newSyncProvider(exp)
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for i := range 20 {
		resp, err := rec.Call(context.Background(), instrument.Turn{Model: "m", Prompt: "p"}, chat("answer", nil))
		if err != nil || resp.Content != "answer" {
			t.Fatalf("call %d with storage down: %+v, %v", i, resp, err)
		}
	}
	if err := exp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := exp.Stats()
	if st.Written != 0 || st.Buffered != 60 || st.Lost != 0 { // 20 calls × (2 turns + 1 span)
		t.Errorf("stats with storage down = %+v, want 0 written and 60 buffered", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Errorf("shutdown with storage down: %v", err)
	}
	// Without a spool, what is still kept at shutdown is lost, and said.
	if st := exp.Stats(); st.Lost != 60 || st.Buffered != 0 || st.LastError == "" {
		t.Errorf("stats after shutdown = %+v, want 60 lost with the error", st)
	}
}

func TestQueueFullDropsAndCounts(t *testing.T) {
	exp, err := collector.NewExporter("clickhouse://"+freeAddr(t)+"/convtrace", collector.WithQueueSize(5), collector.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	tp := newSyncProvider(exp)
	defer tp.Shutdown(context.Background())
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	for range 50 {
		if _, err := rec.Call(context.Background(), instrument.Turn{Prompt: "p"}, chat("a", nil)); err != nil {
			t.Fatal(err)
		}
	}
	_ = exp.ForceFlush(context.Background())
	st := exp.Stats()
	if st.Lost == 0 || st.Lost+st.Buffered+st.Written != 150 {
		t.Errorf("stats = %+v; want drops, and every one of 150 rows accounted for", st)
	}
}

func TestRedeliveryDoesNotDuplicate(t *testing.T) {
	conn, dsn := testkit.Open(t)
	exp, err := collector.NewExporter(dsn)
	if err != nil {
		t.Fatal(err)
	}
	spans := recordSpans(t, func(rec *instrument.Recorder) {
		_, _ = rec.Call(context.Background(), instrument.Turn{Prompt: "once"}, chat("twice?", nil))
	})
	for range 2 {
		if err := exp.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		if err := exp.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var turns, spanRows uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations FINAL").Scan(&turns); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM spans FINAL").Scan(&spanRows); err != nil {
		t.Fatal(err)
	}
	if turns != 2 || spanRows != 1 {
		t.Errorf("after delivering one call twice: %d turns and %d spans, want 2 and 1", turns, spanRows)
	}
}

func TestOptionsValidate(t *testing.T) {
	if _, err := collector.NewExporter("clickhouse://127.0.0.1:9000/x", collector.WithQueueSize(0), collector.WithFlushInterval(-1)); err == nil {
		t.Error("NewExporter accepted a zero queue and a negative flush interval")
	}
	if _, err := collector.NewExporter("mysql://what"); err == nil {
		t.Error("NewExporter accepted a DSN of another database")
	}
}
