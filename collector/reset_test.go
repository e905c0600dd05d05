package collector_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
)

// A reset recorded from Go reaches the store as a context_reset turn of
// the thread: the recent context starts after it, the thread keeps every
// turn.
func TestResetContextFromGo(t *testing.T) {
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("itest"), collector.WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	if err := rec.ResetContext(context.Background()); !errors.Is(err, instrument.ErrNoThread) {
		t.Errorf("ResetContext without a thread: %v, want ErrNoThread", err)
	}
	ctx := instrument.WithPhase(instrument.WithThread(context.Background(), "th-reset"), "plan")
	if _, err := rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "old question"}, chat("old answer", nil)); err != nil {
		t.Fatal(err)
	}
	if err := rec.ResetContext(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "new question"}, chat("new answer", nil)); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	msgs, err := store.RecentContext(context.Background(), conn, "th-reset", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Content != "new question" || msgs[1].Content != "new answer" {
		t.Errorf("recent context after a reset from Go: %+v, want the new call alone", msgs)
	}
	var roles []string
	rows, err := conn.Query(context.Background(), "SELECT role, project, phase FROM conversations WHERE thread_id = 'th-reset' ORDER BY start_ns, seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var role, project, phase string
		if err := rows.Scan(&role, &project, &phase); err != nil {
			t.Fatal(err)
		}
		if project != "itest" || phase != "plan" {
			t.Errorf("%s turn in project %q, phase %q; want itest, plan", role, project, phase)
		}
		roles = append(roles, role)
	}
	if got := len(roles); got != 5 || roles[2] != "context_reset" {
		t.Errorf("thread turns %v, want the old call, the reset, the new call", roles)
	}
}
