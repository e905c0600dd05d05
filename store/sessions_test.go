package store_test

import (
	"context"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// A session the agent refused to resume is no longer the thread's
// current session: the one before it is, or none.
func TestCurrentSessionSkipsRejected(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	turn := func(id, session string, start uint64, attrs ...schema.Attr) schema.Turn {
		return schema.Turn{TurnID: id, SpanID: id, ThreadID: "th", Project: "p", Role: schema.RoleResponse, Provider: "anthropic",
			SessionID: session, StartNS: start, Attributes: attrs}
	}
	testkit.InsertTurns(t, conn, turn("a", "first", 1), turn("b", "second", 2))
	current := func() string {
		t.Helper()
		s, err := store.CurrentSession(ctx, conn, "th", "anthropic")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := current(); got != "second" {
		t.Fatalf("current session %q, want second", got)
	}
	testkit.InsertTurns(t, conn, turn("c", "", 3, schema.Attr{Key: schema.KeyCode, Value: "session_resume_invalid"},
		schema.Attr{Key: schema.KeyRejectedSession, Value: "second"}))
	if got := current(); got != "first" {
		t.Errorf("after the agent refused second, the current session is %q, want first", got)
	}
}
